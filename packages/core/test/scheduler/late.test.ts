import { describe, expect, it } from 'vitest';
import { sleepOn } from '../../src/backend.js';
import {
  type Clock,
  every,
  FakeClock,
  type FleetcronEvent,
  MemoryLock,
  Scheduler,
} from '../../src/index.js';
import { MAX_MISSED_LISTED, planFires } from '../../src/scheduler/job/fire-plan.js';
import { PREPARE_AHEAD_MS } from '../../src/scheduler/job/job-slots.js';
import { recordEvents } from './helpers.js';

/**
 * A view of a FakeClock whose process can "freeze" (blocked event loop, suspend): `freeze(ms)`
 * moves both wall and monotonic time on by `ms` without firing timers, so timers fire late.
 */
function freezable(fake: FakeClock): Clock & { freeze(ms: number): void } {
  let lag = 0;
  const clock: Clock & { freeze(ms: number): void } = {
    now: () => fake.now() + lag,
    monotonic: () => fake.monotonic() + lag,
    setTimer: (cb, ms) => fake.setTimer(cb, ms),
    clearTimer: (h) => fake.clearTimer(h),
    sleep: (ms, signal) => sleepOn(clock, ms, signal),
    freeze: (ms) => {
      lag += ms;
    },
  };
  return clock;
}

describe('late wake-up rule', () => {
  it('claims only the newest passed fire and publishes fire.missed for the older ones', async () => {
    const fake = new FakeClock();
    const clock = freezable(fake);
    const lock = new MemoryLock({ clock });
    const s = new Scheduler({ lock, clock, instanceId: 'late' });
    const ran: number[] = [];
    s.add({ name: 'tick', trigger: every(1000), run: (c) => void ran.push(c.fireAt.getTime()) });
    const start = clock.now();
    const rec = recordEvents();
    s.start();
    await fake.advance(2_000); // fires start+1000, start+2000
    clock.freeze(5_500); // the event loop is blocked for 5.5 s
    await fake.advance(1_000); // the timer for start+3000 fires, 5.5 s late
    rec.stop();
    expect(ran).toEqual([start + 1000, start + 2000, start + 8000]);
    const missed = rec.events.filter(
      (e): e is Extract<FleetcronEvent, { type: 'fire.missed' }> =>
        e.type === 'fire.missed' && e.instanceId === 'late',
    );
    expect(missed.map((e) => e.fireAt)).toEqual(
      [3000, 4000, 5000, 6000, 7000].map((d) => start + d),
    );
    // the timer woke PREPARE_AHEAD_MS before start+3000 (the fire is prepared ahead), then blocked
    expect(missed.map((e) => e.lateMs)).toEqual(
      [5500, 4500, 3500, 2500, 1500].map((ms) => ms - PREPARE_AHEAD_MS),
    );
    // and it keeps its rhythm afterwards
    await fake.advance(2_000);
    expect(ran.slice(3)).toEqual([start + 9000, start + 10_000]);
    await s.stop();
  });

  it('claims nothing when even the newest passed fire left the claim window', () => {
    const plan = planFires(every(60_000), 60_000, 60_000 * 20 + 30_000, 10_000);
    expect(plan.claim).toBeNull();
    expect(plan.missed).toHaveLength(20);
    expect(plan.next).toBe(60_000 * 21);
  });

  it('plans a single on-time fire without missed ones', () => {
    expect(planFires(every(1000), 5000, 5000, 300_000)).toEqual({
      claim: 5000,
      missed: [],
      unlisted: false,
      next: 6000,
    });
  });

  it('bounds the work after a very long stall (every 1 ms, one hour late)', () => {
    const due = 1_000_000;
    const now = due + 3_600_000;
    const plan = planFires(every(1), due, now, 300_000);
    expect(plan.claim).toBe(now);
    expect(plan.next).toBe(now + 1);
    expect(plan.unlisted).toBe(true);
    expect(plan.missed.length).toBeLessThanOrEqual(MAX_MISSED_LISTED + 1);
  });
});
