import { describe, expect, it } from 'vitest';
import {
  every,
  FakeClock,
  MemoryLock,
  MemoryStore,
  type OverlapPolicy,
  offsetClock,
  Scheduler,
} from '../../src/index.js';
import { allHistory, firesBetween, recordEvents } from './helpers.js';

interface Run {
  fireAt: number;
  instanceId: string;
  /** When the run started by the backend's clock (the FakeClock, which the MemoryLock reads). */
  startedAt: number;
}

interface Fleet {
  fake: FakeClock;
  lock: MemoryLock;
  store: MemoryStore;
  overlap: OverlapPolicy;
  runs: Run[];
}

function fleetOf(overlap: OverlapPolicy): Fleet {
  const fake = new FakeClock();
  return {
    fake,
    lock: new MemoryLock({ clock: fake }),
    store: new MemoryStore(),
    overlap,
    runs: [],
  };
}

/** A scheduler of the simulated fleet: one job every second that finishes in 1 ms. */
function member({ fake, lock, store, overlap, runs }: Fleet, id: string, offsetMs: number) {
  const clock = offsetClock(fake, offsetMs);
  const scheduler = new Scheduler({ lock, store, clock, instanceId: id });
  scheduler.add({
    name: 'tick',
    trigger: every(1000),
    overlap,
    run: async (ctx) => {
      const startedAt = fake.now();
      await ctx.clock.sleep(1);
      runs.push({ fireAt: ctx.fireAt.getTime(), instanceId: ctx.instanceId, startedAt });
    },
  });
  return scheduler;
}

/** Stops schedulers while moving the fake clock so in-flight runs can finish. */
async function stopAll(fake: FakeClock, schedulers: Scheduler[]): Promise<void> {
  const stopped = Promise.all(schedulers.map((s) => s.stop({ drainMs: 5_000 })));
  await fake.advance(100);
  await stopped;
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/**
 * Every expected fire happened exactly once fleet-wide: as a run, or (overlap `skip`) as one
 * `skipped` execution because the previous run still held the job's lease.
 */
async function expectEachFireOnce(fleet: Fleet, expected: number[]): Promise<void> {
  const all = fleet.runs.map((r) => r.fireAt);
  expect(all.length, 'no fire ran twice').toBe(new Set(all).size);
  // fires before the first expected one: only the slow clock saw them, late (may run or not)
  const from = expected[0]!;
  const ran = sorted(all.filter((f) => f >= from));
  const history = (await allHistory(fleet.store, 'tick')).filter((e) => e.fireAt >= from);
  const succeeded = sorted(history.filter((e) => e.status === 'succeeded').map((e) => e.fireAt));
  const skipped = history.filter((e) => e.status === 'skipped');
  expect(succeeded).toEqual(ran);
  expect(history.length).toBe(succeeded.length + skipped.length);
  if (fleet.overlap === 'allow') {
    expect(skipped).toEqual([]);
    expect(ran).toEqual(expected);
  } else {
    // skips only for overlap (with clocks learned at start(), there may be none)
    for (const e of skipped) expect(e.reason, `fire ${e.fireAt} skipped`).toBe('overlap');
    expect(sorted([...ran, ...skipped.map((e) => e.fireAt)])).toEqual(expected);
    expect(ran.length).toBeGreaterThan(expected.length / 3);
  }
  // the backend's clock decides: no run starts before its time, whoever's clock runs fast
  expect(fleet.runs.filter((r) => r.startedAt < r.fireAt)).toEqual([]);
}

describe.each(['allow', 'skip'] as const)(
  'fleet of skewed instances on one MemoryLock, overlap %s (Guarantees 1 and 2)',
  (overlap) => {
    it('handles each of 1,000 fires exactly once, none missed (clocks -2 s, 0, +3 s)', async () => {
      const fleet = fleetOf(overlap);
      const { fake } = fleet;
      const rec = recordEvents();
      const members = [
        member(fleet, 'slow', -2000),
        member(fleet, 'exact', 0),
        member(fleet, 'fast', 3000),
      ];
      const start = fake.now();
      for (const s of members) s.start();
      await fake.advance(1_000_000);
      const end = fake.now();
      await stopAll(fake, members);
      rec.stop();

      // every fire after the start (the exact instance's first) up to the backend's clock at the
      // end: the fast clock's claims ahead of it are refused early and claimed again on time
      const expected = firesBetween(1000, start + 1, end);
      expect(expected.length).toBeGreaterThanOrEqual(1000);
      await expectEachFireOnce(fleet, expected);
      expect(rec.events.filter((e) => e.type === 'fire.missed' && e.fireAt > start)).toEqual([]);
      // each instance estimated its skew from the backend's times (exact on the fake clock)
      expect(members.map((m) => m.clockOffset()?.offsetMs)).toEqual([2000, 0, -3000]);
    });

    it('loses no fire while the fast instance stops and restarts mid-run', async () => {
      const fleet = fleetOf(overlap);
      const { fake, runs } = fleet;
      const rec = recordEvents();
      const slow = member(fleet, 'slow', -2000);
      const exact = member(fleet, 'exact', 0);
      const fast = member(fleet, 'fast', 3000);
      const start = fake.now();
      for (const s of [slow, exact, fast]) s.start();
      await fake.advance(300_000);
      await stopAll(fake, [fast]);
      await fake.advance(200_000);
      // a restarted process: new instance id, clock still 3 s ahead; it jumps over 3 s of fires
      // that the others must still be able to claim
      const fastAgain = member(fleet, 'fast-restarted', 3000);
      fastAgain.start();
      await fake.advance(500_000);
      const end = fake.now();
      await stopAll(fake, [slow, exact, fastAgain]);
      rec.stop();

      const expected = firesBetween(1000, start + 1, end);
      expect(expected.length).toBeGreaterThanOrEqual(1000);
      await expectEachFireOnce(fleet, expected);
      const winners = new Set(runs.map((r) => r.instanceId));
      expect(winners.has('exact') || winners.has('slow')).toBe(true);
      expect(rec.events.filter((e) => e.type === 'fire.missed' && e.fireAt > start)).toEqual([]);
    });
  },
);
