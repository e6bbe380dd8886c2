import { describe, expect, it } from 'vitest';
import {
  type CatchUpPolicy,
  every,
  FakeClock,
  type Lock,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { BatchLock } from './batch-lock.js';
import { allHistory, FlakyLock, settle } from './helpers.js';

const SEC = 1_000;
/** Each run works this long: longer than the job's period, so runs meet the next fires. */
const WORK_MS = 4 * SEC;

interface Run {
  instanceId: string;
  fireAt: number;
  start: number;
  end: number;
}

/**
 * Three schedulers run `every(10 s)` (overlap `'skip'`, the default: an exclusive job) until
 * 20 s, are all stopped, the whole fleet stays down across the fires at 30..60 s, and all three
 * start again together at `restartAt` (63 s unless told). Each run works {@link WORK_MS} on the
 * fake clock. `startAgain: false` leaves the restart to the test (`schedulers`).
 */
async function restartTogether(
  catchUp: CatchUpPolicy,
  lockOf: (fake: FakeClock) => Lock,
  { restartAt = 63 * SEC, startAgain = true } = {},
) {
  const fake = new FakeClock(0);
  const lock = lockOf(fake);
  const store = new MemoryStore({ clock: fake });
  const runs: Run[] = [];
  const schedulers = ['a', 'b', 'c'].map((instanceId) => {
    const s = new Scheduler({ lock, store, clock: fake, instanceId });
    s.add({
      name: 'job',
      trigger: every(10 * SEC),
      catchUp,
      leaseMs: 6 * SEC, // shorter than a series of runs: the lease is renewed throughout
      run: async (ctx) => {
        const run = { instanceId, fireAt: ctx.fireAt.getTime(), start: fake.now(), end: -1 };
        runs.push(run);
        await ctx.clock.sleep(WORK_MS);
        run.end = fake.now();
      },
    });
    return s;
  });
  /** Stops every scheduler, advancing the fake clock by `drainMs` for running jobs to end. */
  const stopAll = async (drainMs = 0) => {
    const stopping = Promise.all(schedulers.map((s) => s.stop()));
    await fake.advance(drainMs);
    await settle(fake);
    await stopping;
  };
  for (const s of schedulers) s.start();
  await fake.advance(25 * SEC); // fires at 10 and 20 s ran
  await stopAll();
  expect(runs.map((r) => r.fireAt)).toEqual([10 * SEC, 20 * SEC]);
  runs.length = 0;
  await fake.advance(restartAt - fake.now()); // down across 30, 40, 50 and 60 s
  if (startAgain) for (const s of schedulers) s.start();
  return { fake, store, runs, stopAll, schedulers };
}

/** No two runs of the job overlap in time. */
function overlapping(runs: readonly Run[]): string[] {
  const sorted = [...runs].sort((x, y) => x.start - y.start);
  return sorted.slice(1).flatMap((run, i) => {
    const before = sorted[i] as Run;
    return run.start < before.end
      ? [`${before.fireAt} (until ${before.end}) and ${run.fireAt}`]
      : [];
  });
}

const locks: Array<[string, (fake: FakeClock) => Lock]> = [
  ['MemoryLock (single claims)', (fake) => new MemoryLock({ clock: fake })],
  ['a batching lock (claimMany)', (fake) => new BatchLock(new MemoryLock({ clock: fake }))],
];

describe.each(locks)(
  'catch-up of an exclusive job, whole fleet restarted together (%s)',
  (_, lockOf) => {
    it('{ max: 3 } runs the three newest missed fires once each, oldest first, one at a time', async () => {
      const { fake, store, runs, stopAll } = await restartTogether({ max: 3 }, lockOf);
      await fake.advance(3 * WORK_MS + SEC); // the series has ended by 76 s
      await settle(fake);
      const caughtUp = runs.filter((r) => r.fireAt < 63 * SEC);
      expect(caughtUp.map((r) => r.fireAt)).toEqual([40 * SEC, 50 * SEC, 60 * SEC]);
      // one decision: whoever won the catch-up claim ran the whole series
      expect(new Set(caughtUp.map((r) => r.instanceId)).size).toBe(1);
      expect(overlapping(runs)).toEqual([]);
      const rows = (await allHistory(store, 'job')).filter((r) => r.fireAt > 20 * SEC);
      const byFire = rows.map((r) => [r.fireAt / SEC, r.status, r.reason]).sort();
      // 70 s came while the series ran (the third run, 71..75 s... it began at 71 s): the overlap
      // rule decides it, and it is recorded; 30 s is older than the newest three, never run
      expect(byFire).toEqual([
        [40, 'succeeded', null],
        [50, 'succeeded', null],
        [60, 'succeeded', null],
        [70, 'skipped', 'overlap'],
      ]);
      await stopAll();
    });

    it('the next regular fire is claimed at its time while the series runs (held only until the catch-up claim is answered)', async () => {
      const { fake, store, runs, stopAll } = await restartTogether({ max: 3 }, lockOf);
      await fake.advance(70 * SEC + 50 - fake.now());
      await settle(fake);
      // at 70.05 s the series is on its second run: 70 s was claimed on time and answered busy
      const rows = await allHistory(store, 'job');
      const at70 = rows.filter((r) => r.fireAt === 70 * SEC);
      expect(at70.map((r) => [r.status, r.reason])).toEqual([['skipped', 'overlap']]);
      expect(at70[0]?.startedAt).toBeLessThanOrEqual(70 * SEC + 50);
      expect(runs.map((r) => r.fireAt)).toEqual([40 * SEC, 50 * SEC]);
      // once the series is done, regular fires run again: 80 s
      await fake.advance(85 * SEC - fake.now());
      await settle(fake);
      expect(runs.map((r) => r.fireAt)).toEqual([40, 50, 60, 80].map((s) => s * SEC));
      expect(overlapping(runs)).toEqual([]);
      await stopAll();
    });

    it('{ max: 3 } with the newest fire in the grace: an instance that reads the mark after the catch-up claim does not claim that fire against the series', async () => {
      // back at 60.5 s: 60 s is the grace fire (due within the 1 s grace before start), the
      // newest of the three; a starts first and wins the catch-up claim, b and c read the mark
      // only once it moved (before the fix, they then claimed 60 s as a regular fire against
      // the series' lease: busy, recorded skipped/overlap, never run)
      const { fake, store, runs, stopAll, schedulers } = await restartTogether({ max: 3 }, lockOf, {
        restartAt: 60 * SEC + 500,
        startAgain: false,
      });
      const [a, ...others] = schedulers as [Scheduler, ...Scheduler[]];
      a.start();
      await settle(fake); // a's mark read and catch-up claim are answered
      for (const s of others) s.start();
      await fake.advance(3 * WORK_MS + SEC);
      await settle(fake);
      const caughtUp = runs.filter((r) => r.fireAt <= 60 * SEC);
      expect(caughtUp.map((r) => [r.fireAt / SEC, r.instanceId])).toEqual([
        [40, 'a'],
        [50, 'a'],
        [60, 'a'],
      ]);
      expect(overlapping(runs)).toEqual([]);
      const rows = (await allHistory(store, 'job')).filter(
        (r) => r.fireAt > 20 * SEC && r.fireAt <= 60 * SEC,
      );
      expect(rows.map((r) => [r.fireAt / SEC, r.status, r.reason]).sort()).toEqual([
        [40, 'succeeded', null],
        [50, 'succeeded', null],
        [60, 'succeeded', null],
      ]);
      await stopAll(WORK_MS);
    });

    it("'latest' runs the newest missed fire once", async () => {
      const { fake, runs, stopAll } = await restartTogether('latest', lockOf);
      await fake.advance(WORK_MS + SEC);
      await settle(fake);
      expect(runs.map((r) => r.fireAt)).toEqual([60 * SEC]);
      await stopAll();
    });

    it("'skip' records each missed fire once as skipped/missed (one instance, one claim)", async () => {
      const { fake, store, runs, stopAll } = await restartTogether('skip', lockOf);
      await fake.advance(SEC);
      await settle(fake);
      expect(runs).toEqual([]);
      const rows = (await allHistory(store, 'job')).filter((r) => r.fireAt > 20 * SEC);
      expect(rows.map((r) => [r.fireAt / SEC, r.status, r.reason]).sort()).toEqual([
        [30, 'skipped', 'missed'],
        [40, 'skipped', 'missed'],
        [50, 'skipped', 'missed'],
        [60, 'skipped', 'missed'],
      ]);
      await stopAll();
    });
  },
);

describe('a catch-up series when stop() begins', () => {
  it('records the members not started yet as skipped (stopping), and runs no more of them', async () => {
    const { fake, store, runs, stopAll } = await restartTogether(
      { max: 3 },
      (fake) => new MemoryLock({ clock: fake }),
    );
    await fake.advance(65 * SEC - fake.now()); // the first member (40 s) runs
    await settle(fake);
    expect(runs.map((r) => r.fireAt)).toEqual([40 * SEC]);
    await stopAll(WORK_MS); // the running member drains; 50 and 60 s do not start
    expect(runs.map((r) => r.fireAt)).toEqual([40 * SEC]);
    const rows = (await allHistory(store, 'job')).filter((r) => r.fireAt > 20 * SEC);
    expect(rows.map((r) => [r.fireAt / SEC, r.status, r.reason]).sort()).toEqual([
      [40, 'succeeded', null],
      [50, 'skipped', 'stopping'],
      [60, 'skipped', 'stopping'],
    ]);
  });
});

describe('a catch-up series whose lease is lost', () => {
  it('records the running member lease_lost and the others skipped (lease_expired); none runs after', async () => {
    let flaky: FlakyLock | null = null;
    const { fake, store, runs, stopAll } = await restartTogether({ max: 3 }, (fake) => {
      flaky = new FlakyLock(new MemoryLock({ clock: fake }));
      return flaky;
    });
    await fake.advance(64 * SEC - fake.now()); // the first member (40 s) runs
    await settle(fake);
    (flaky as FlakyLock | null)!.extendMode = 'null'; // the backend says the lease is gone
    await fake.advance(3 * WORK_MS);
    await settle(fake);
    expect(runs.filter((r) => r.fireAt < 63 * SEC).map((r) => r.fireAt)).toEqual([40 * SEC]);
    const rows = (await allHistory(store, 'job')).filter(
      (r) => r.fireAt > 20 * SEC && r.fireAt < 63 * SEC,
    );
    expect(rows.map((r) => [r.fireAt / SEC, r.status, r.reason]).sort()).toEqual([
      [40, 'lease_lost', null],
      [50, 'skipped', 'lease_expired'],
      [60, 'skipped', 'lease_expired'],
    ]);
    (flaky as FlakyLock | null)!.extendMode = 'ok';
    await stopAll(WORK_MS);
  });
});
