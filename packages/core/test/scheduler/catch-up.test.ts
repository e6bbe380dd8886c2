import { describe, expect, it } from 'vitest';
import {
  at,
  type CatchUpPolicy,
  every,
  FakeClock,
  isFleetcronError,
  type Lock,
  type LockInspection,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { catchUpPlan, missedFires } from '../../src/scheduler/catch-up/catch-up-plan.js';
import { BatchLock } from './batch-lock.js';
import { allHistory, recordEvents } from './helpers.js';

const MIN = 60_000;
/** Time given to the catch-up pass after start() (it runs at once; this is a margin). */
const CATCH_UP_MS = 6_000;

/**
 * A fleet of two runs `every(1 min)` for 2 minutes, is down (both stopped) for 5.5 minutes
 * (fires at 3..7 min missed), then both start again.
 */
async function wholeFleetDown(catchUp: CatchUpPolicy) {
  const fake = new FakeClock(0);
  const lock = new MemoryLock({ clock: fake });
  const store = new MemoryStore({ clock: fake });
  const runs: Array<{ instanceId: string; fireAt: number }> = [];
  const schedulers = ['a', 'b'].map((instanceId) => {
    const s = new Scheduler({ lock, store, clock: fake, instanceId });
    s.add({
      name: 'job',
      trigger: every(MIN),
      catchUp,
      run: (ctx) => void runs.push({ instanceId, fireAt: ctx.fireAt.getTime() }),
    });
    return s;
  });
  const stopAll = async () => {
    const stopping = Promise.all(schedulers.map((s) => s.stop()));
    await fake.advance(0);
    await stopping;
  };
  for (const s of schedulers) s.start();
  await fake.advance(2 * MIN);
  expect(runs.map((r) => r.fireAt)).toEqual([MIN, 2 * MIN]);
  await stopAll();
  await fake.advance(5.5 * MIN); // the whole fleet is down across 3, 4, 5, 6 and 7 min
  runs.length = 0;
  const rec = recordEvents();
  for (const s of schedulers) s.start();
  await fake.advance(CATCH_UP_MS);
  // each claim of the sequential catch-up chain goes out in the next claim batch (one macrotask
  // hop, no timer): let the chain settle
  for (let i = 0; i < 20; i++) await fake.flush();
  rec.stop();
  return { fake, store, runs, events: rec.events, stopAll };
}

describe("catch-up after the whole fleet was down (catchUp, from the lock's mark)", () => {
  it("'latest' runs the newest missed fire once fleet-wide, then fires go on", async () => {
    const { fake, runs, stopAll } = await wholeFleetDown('latest');
    expect(runs.map((r) => r.fireAt)).toEqual([7 * MIN]);
    await fake.advance(MIN);
    expect(runs.map((r) => r.fireAt)).toEqual([7 * MIN, 8 * MIN]);
    await stopAll();
  });

  it('{ max: 3 } runs the three newest missed fires once each, oldest first', async () => {
    const { store, runs, stopAll } = await wholeFleetDown({ max: 3 });
    expect(runs.map((r) => r.fireAt)).toEqual([5 * MIN, 6 * MIN, 7 * MIN]);
    const rows = (await allHistory(store, 'job')).filter((r) => r.fireAt > 2 * MIN);
    expect(rows.map((r) => [r.fireAt, r.status]).sort()).toEqual([
      [5 * MIN, 'succeeded'],
      [6 * MIN, 'succeeded'],
      [7 * MIN, 'succeeded'],
    ]);
    await stopAll();
  });

  it('{ max, within } catches up only fires not older than within', async () => {
    const { runs, stopAll } = await wholeFleetDown({ max: 10, within: 2.4 * MIN });
    expect(runs.map((r) => r.fireAt)).toEqual([6 * MIN, 7 * MIN]); // now 7.5 min: since 5.1 min
    await stopAll();
  });

  it("'skip' runs none, publishes fire.missed and records each missed fire once as skipped/missed", async () => {
    const { store, runs, events, stopAll } = await wholeFleetDown('skip');
    expect(runs).toEqual([]);
    const missed = [3, 4, 5, 6, 7].map((m) => m * MIN);
    const rows = (await allHistory(store, 'job')).filter((r) => r.fireAt > 2 * MIN);
    expect(rows.map((r) => [r.fireAt, r.status, r.reason]).sort()).toEqual(
      missed.map((t) => [t, 'skipped', 'missed']),
    );
    const published = events.filter((e) => e.type === 'fire.missed').map((e) => e.fireAt);
    expect(published.sort()).toEqual(missed);
    await stopAll();
  });

  it('a fire due just before a restart in a live fleet is left to the live instance (not missed)', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore({ clock: fake });
    const runs: string[] = [];
    const make = (instanceId: string) => {
      const s = new Scheduler({ lock, store, clock: fake, instanceId });
      s.add({ name: 'job', trigger: every(MIN), run: () => void runs.push(instanceId) });
      return s;
    };
    const live = make('live');
    lock.claim = (
      (claim) => (request) =>
        // the live instance's claim for 3 min lands 2 s late (a slow backend)
        request.owner === 'live' && request.fireAt === 3 * MIN
          ? fake.sleep(2_000).then(() => claim(request))
          : claim(request)
    )(lock.claim.bind(lock));
    live.start();
    await fake.advance(3 * MIN - 1); // fires at 1 and 2 min ran (the mark); 3 min is due in 1 ms
    const restarted = make('restarted');
    await fake.advance(1); // now = 3 min: due
    restarted.start(); // catch-up considers fires up to now (3 min)
    await fake.advance(CATCH_UP_MS);
    expect(runs).toEqual(['live', 'live', 'live']);
    const rows = await allHistory(store, 'job');
    rows.sort((x, y) => x.fireAt - y.fireAt);
    expect(rows.map((r) => [r.fireAt, r.status, r.reason])).toEqual([
      [MIN, 'succeeded', null],
      [2 * MIN, 'succeeded', null],
      [3 * MIN, 'succeeded', null],
    ]);
    const stopping = Promise.all([live.stop(), restarted.stop()]);
    await fake.advance(0);
    await stopping;
  });

  it("'latest' with a lock that keeps no mark: a typed error at add()", () => {
    const inner = new MemoryLock();
    const { durableMark: _, ...capabilities } = inner.capabilities;
    const noMark = Object.create(inner, { capabilities: { value: capabilities } }) as Lock;
    const s = new Scheduler({ lock: noMark });
    let thrown: unknown = null;
    try {
      s.add({ name: 'j', trigger: every(MIN), catchUp: 'latest', run: () => {} });
    } catch (error) {
      thrown = error;
    }
    expect(isFleetcronError(thrown, 'INVALID_OPTION')).toBe(true);
    expect((thrown as { field?: string }).field).toBe('catchUp');
  });
});

/**
 * Three schedulers run `every(1 s)` for 5 s, the whole fleet is down from 5.5 s to 15.5 s
 * (fires 6..15 s missed), then all three start together. The catch-up pass must go ahead of
 * the first regular claim (16 s), which would move the mark past every missed fire.
 */
async function frequentJobFleetDown(catchUp: CatchUpPolicy) {
  const fake = new FakeClock(0);
  const lock = new MemoryLock({ clock: fake });
  const store = new MemoryStore({ clock: fake });
  const runs: Array<{ instanceId: string; fireAt: number }> = [];
  const schedulers = ['a', 'b', 'c'].map((instanceId) => {
    const s = new Scheduler({ lock, store, clock: fake, instanceId });
    s.add({
      name: 'job',
      trigger: every(1_000),
      catchUp,
      run: (ctx) => void runs.push({ instanceId, fireAt: ctx.fireAt.getTime() }),
    });
    return s;
  });
  const stopAll = async () => {
    const stopping = Promise.all(schedulers.map((s) => s.stop()));
    await fake.advance(0);
    await stopping;
  };
  for (const s of schedulers) s.start();
  await fake.advance(5_500);
  expect(runs.map((r) => r.fireAt)).toEqual([1, 2, 3, 4, 5].map((t) => t * 1_000));
  await stopAll();
  await fake.advance(10_000); // now 15.5 s
  runs.length = 0;
  for (const s of schedulers) s.start();
  await fake.advance(3_000); // to 18.5 s: regular fires 16, 17, 18 s
  await stopAll();
  return { store, fireTimes: runs.map((r) => r.fireAt) };
}

describe('catch-up of a job firing every second (the pass goes before the first regular claim)', () => {
  it("'latest' runs the newest missed fire once fleet-wide, one due within the grace (1 s) before start() too", async () => {
    const { store, fireTimes } = await frequentJobFleetDown('latest');
    // 15 s is within the grace before start() (15.5 s): nobody claimed it (the mark is at 5 s),
    // so it is the newest missed fire, claimed late as a regular fire; 6–14 s are not run
    expect(fireTimes).toEqual([15_000, 16_000, 17_000, 18_000]);
    const rows = (await allHistory(store, 'job')).filter((r) => r.fireAt > 5_000);
    expect(rows.map((r) => [r.fireAt, r.status]).sort()).toEqual([
      [15_000, 'succeeded'],
      [16_000, 'succeeded'],
      [17_000, 'succeeded'],
      [18_000, 'succeeded'],
    ]);
  });

  it('{ max: 3 } runs the three newest missed fires once each, oldest first, the one due within the grace last', async () => {
    const { store, fireTimes } = await frequentJobFleetDown({ max: 3 });
    // 13 and 14 s under the catch-up claim, then 15 s (within the grace) claimed late by its winner
    expect(fireTimes).toEqual([13_000, 14_000, 15_000, 16_000, 17_000, 18_000]);
    const rows = (await allHistory(store, 'job')).filter((r) => r.fireAt > 5_000);
    expect(rows.filter((r) => r.status !== 'succeeded')).toEqual([]);
    expect(rows.map((r) => r.fireAt).sort((x, y) => x - y)).toEqual(fireTimes);
  });
});

describe('catch-up of a job firing every second under the default skip', () => {
  it('records every missed fire skipped (missed), the one due within the grace before start() too', async () => {
    const { store, fireTimes } = await frequentJobFleetDown('skip');
    expect(fireTimes).toEqual([16_000, 17_000, 18_000]);
    const rows = (await allHistory(store, 'job')).filter((r) => r.fireAt > 5_000);
    const skipped = rows.filter((r) => r.status === 'skipped');
    expect(skipped.map((r) => r.fireAt).sort((x, y) => x - y)).toEqual(
      [6, 7, 8, 9, 10, 11, 12, 13, 14, 15].map((t) => t * 1_000),
    );
    expect(new Set(skipped.map((r) => r.reason))).toEqual(new Set(['missed']));
  });
});

describe('catch-up plan', () => {
  it('walks the trigger from the mark to now', () => {
    expect(missedFires(every(10), 20, 65, 100)).toEqual([30, 40, 50, 60]);
    expect(missedFires(every(10), 20, 65, 2)).toEqual([50, 60]);
    // a long outage of a frequent job: the newest fires, found without walking 10^7 fires
    expect(missedFires(every(1), 0, 10_000_000, 3)).toEqual([9_999_998, 9_999_999, 10_000_000]);
    const window = { mark: 20, now: 65, windowMs: 1_000 };
    expect(catchUpPlan('latest', every(10), window)).toEqual({
      fires: [60],
      since: 60,
      missed: false,
    });
    expect(catchUpPlan({ max: 5, within: 30 }, every(10), window)).toEqual({
      fires: [40, 50, 60],
      since: 35,
      missed: false,
    });
    expect(catchUpPlan('skip', every(10), window).missed).toBe(true);
  });
});

describe('catch-up with a trigger that throws', () => {
  it('is logged, not an unhandled rejection; other jobs still catch up', async () => {
    const fake = new FakeClock(0);
    const lock = new MemoryLock({ clock: fake });
    const warnings: string[] = [];
    const logger = {
      ...{ debug() {}, info() {}, error() {} },
      warn: (msg: string) => void warnings.push(msg),
    };
    let broken = false;
    const base = every(MIN);
    const trigger = {
      describe: () => 'flaky',
      next: (after: Date) => {
        if (broken) throw new Error('trigger broke');
        return base.next(after);
      },
    };
    const runs: number[] = [];
    const make = () => {
      const s = new Scheduler({ lock, clock: fake, instanceId: 'x', logger });
      s.add({ name: 'flaky', trigger, run: () => {} });
      s.add({
        name: 'fine',
        trigger: every(MIN),
        catchUp: 'latest',
        run: (c) => void runs.push(c.fireAt.getTime()),
      });
      return s;
    };
    let s = make();
    s.start();
    await fake.advance(MIN);
    let stopping = s.stop();
    await fake.advance(0);
    await stopping;
    await fake.advance(2 * MIN + 2_000); // 3 min is due more than the grace (1 s) before start()
    s = make();
    broken = true;
    s.start();
    await fake.advance(CATCH_UP_MS);
    expect(warnings).toContain('fleetcron: catch-up failed');
    expect(runs).toEqual([MIN, 3 * MIN]);
    stopping = s.stop();
    await fake.advance(0);
    await stopping;
  });
});

describe('catch-up pass only for jobs that can have missed a fire', () => {
  it('at() jobs ahead are not held behind mark reads: claimed together on their wake, never inspected', async () => {
    const fake = new FakeClock(5 * MIN);
    const inspected: string[] = [];
    /** A lock whose mark reads never answer (a pass holds its job's claims up to the lease). */
    class HangingMarks extends BatchLock {
      override inspect(key: string): Promise<LockInspection> {
        inspected.push(key);
        return new Promise(() => {});
      }
    }
    const lock = new HangingMarks(new MemoryLock({ clock: fake }));
    const s = new Scheduler({ lock, clock: fake, instanceId: 'a' });
    const ran: string[] = [];
    const fireAt = 5 * MIN + 10_000;
    for (let i = 0; i < 8; i++) {
      s.add({ name: `at-${i}`, trigger: at(fireAt), run: (c) => void ran.push(c.job) });
    }
    s.add({ name: 'minutely', trigger: every(MIN), run: () => {} }); // fired before start(): read
    s.start();
    await fake.advanceTo(fireAt);
    for (let i = 0; i < 10; i++) await fake.flush();
    expect(inspected).toEqual(['minutely']);
    expect(lock.claimBatches.map((b) => b.requests.map((r) => r.key).sort())).toEqual([
      Array.from({ length: 8 }, (_, i) => `at-${i}`),
    ]);
    expect(ran.sort()).toEqual(Array.from({ length: 8 }, (_, i) => `at-${i}`));
    const stopping = s.stop();
    await fake.advance(0);
    await stopping;
  });
});
