import { describe, expect, it } from 'vitest';
import {
  type BatchOptions,
  every,
  FakeClock,
  type MarkReading,
  MemoryLock,
  offsetClock,
  Scheduler,
} from '../../src/index.js';
import { recordEvents } from './helpers.js';

const AHEAD_MS = 1_500;
const WORK_MS = 2_200;
/** The fleet's clock when the restarted instance starts: 182 ms before the fire at 10.3 s. */
const RESTART_AT = 10_300 - 800;

/**
 * The chaos fleet's duplicate and lost fire (etcd, 2026-12-07): an instance whose clock runs 1.5 s ahead of
 * the backend's restarts beside a live instance, 182 ms before a fire of an `overlap: 'allow'`
 * job. Its catch-up pass used to judge on its own clock, took that fire (still ahead by the
 * fleet's clock, within the lock's early tolerance) as missed and ran it; its regular schedule,
 * on the fleet's clock as learned at start, then claimed the same fire, and the lock, idempotent
 * for a re-claim by the owner of a live lease, answered with the same lease: the fire ran twice
 * on one instance with one token. Under the default `catchUp: 'skip'` the same misjudgement
 * recorded a fire still 137 ms ahead as `skipped`/`missed`: nobody ran it.
 */
/**
 * A MemoryLock answering the mark reads of a restarted instance as the etcd lock can before it
 * has measured etcd's clock: the first read at once but with no backend time, the second 50 ms
 * late with it. Whichever read of `start()` (the clock probe or the catch-up pass's) comes first,
 * the pass decides its first job before the fleet's clock is known.
 */
class SlowProbeLock extends MemoryLock {
  /** Reads since {@link restart}; `-1` before it (answered as a MemoryLock does). */
  private reads = -1;
  constructor(private readonly fake: FakeClock) {
    // etcd-like: a claim up to 1 s ahead of the backend is granted (the catch-up grace is 1.5 s)
    super({ clock: fake, earlyToleranceMs: 1_000 });
  }
  override async readMarks(keys: readonly string[], options?: BatchOptions): Promise<MarkReading> {
    if (this.reads === -1) return super.readMarks(keys, options);
    this.reads++;
    if (this.reads === 1) return { marks: (await super.readMarks(keys, options)).marks };
    if (this.reads === 2) await this.fake.sleep(50);
    return super.readMarks(keys, options);
  }

  /** From now on, as seen by an instance that restarts. */
  restart(): void {
    this.reads = 0;
  }
}

async function restartAhead() {
  const fake = new FakeClock(0);
  const lock = new SlowProbeLock(fake);
  const runs: { instanceId: string; fireAt: number; token: number }[] = [];
  const scheduler = (
    instanceId: string,
    clock = fake as FakeClock | ReturnType<typeof offsetClock>,
  ) => {
    const s = new Scheduler({ lock, clock, instanceId });
    s.add({
      name: 'allow-2s',
      trigger: every(2_000, { anchor: 300 }),
      overlap: 'allow',
      run: async (ctx) => {
        runs.push({ instanceId, fireAt: ctx.fireAt.getTime(), token: ctx.token });
        await ctx.clock.sleep(WORK_MS, ctx.signal).catch(() => undefined);
      },
    });
    return s;
  };
  const live = scheduler('live');
  live.start();
  await fake.advance(RESTART_AT - 400);
  const liveStopped = live.stop({ drainMs: 0 });
  await fake.advance(400);
  await liveStopped;
  const rec = recordEvents();
  lock.restart();
  const ahead = scheduler('ahead', offsetClock(fake, AHEAD_MS));
  ahead.start();
  for (let t = 0; t < 8_000; t += 100) await fake.advance(100);
  const stopping = Promise.all([live.stop({ drainMs: 0 }), ahead.stop({ drainMs: 0 })]);
  for (let i = 0; i < 50; i++) await fake.advance(100);
  await stopping;
  rec.stop();
  const skipped = rec.events.filter((e) => e.type === 'fire.skipped');
  return { runs, skipped };
}

describe('an instance restarting with a clock ahead of the fleet', () => {
  it('runs every fire once: its catch-up judges missed fires on the fleet clock, and no fire is handled twice here', async () => {
    const { runs, skipped } = await restartAhead();
    // a fire still ahead by the fleet's clock is never recorded missed (it was, and lost)
    expect(skipped).toEqual([]);
    const byFire = new Map<number, string[]>();
    for (const r of runs) byFire.set(r.fireAt, [...(byFire.get(r.fireAt) ?? []), r.instanceId]);
    const fires = [...byFire.keys()].sort((a, b) => a - b);
    // every fire from 0.3 s to the end, each once
    expect(fires[0]).toBe(300);
    expect(fires).toEqual(fires.map((_, i) => 300 + 2_000 * i));
    expect(fires.at(-1)).toBeGreaterThanOrEqual(16_300);
    for (const [fireAt, by] of byFire) expect(by, `fire ${fireAt}`).toHaveLength(1);
    const tokens = runs.map((r) => r.token);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('a monotonic clock with fractions of a ms (performance.now()): the missed fires of catchUp { max } are caught up', async () => {
    const fake = new FakeClock(500);
    let calls = 0;
    // real monotonic time has fractions: start() on the fleet's clock is then fractional too
    const fractional = Object.assign(offsetClock(fake, 0), {
      monotonic: () => fake.monotonic() + ((calls++ * 0.37) % 1),
    });
    const lock = new MemoryLock({ clock: fake });
    const runs: number[] = [];
    const scheduler = () => {
      const s = new Scheduler({ lock, clock: fractional, instanceId: 'a' });
      s.add({
        name: 'job',
        trigger: every(1_000),
        catchUp: { max: 3 },
        run: (ctx) => void runs.push(ctx.fireAt.getTime()),
      });
      return s;
    };
    const first = scheduler();
    first.start();
    await fake.advance(2_000);
    await first.stop();
    await fake.advance(5_000); // down across 3..7 s
    const second = scheduler();
    second.start();
    for (let i = 0; i < 20; i++) await fake.advance(100);
    await second.stop();
    expect(runs).toEqual([1_000, 2_000, 5_000, 6_000, 7_000, 8_000, 9_000]);
  });
});
