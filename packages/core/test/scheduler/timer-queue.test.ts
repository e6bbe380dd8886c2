import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS } from '../../src/backend.js';
import { type Clock, FakeClock } from '../../src/index.js';
import { TimerQueue, WALL_CHECK_MS } from '../../src/scheduler/timing/timer-queue.js';

describe('TimerQueue', () => {
  it('runs entries in order of due time behind one clock timer', async () => {
    const fake = new FakeClock();
    const q = new TimerQueue(fake, (e) => {
      throw e;
    });
    const order: string[] = [];
    const start = fake.now();
    q.after(300, () => order.push('m300'));
    q.atWall(start + 100, () => order.push('w100'));
    const cancelled = q.after(200, () => order.push('m200'));
    q.after(200, () => order.push('m200b'));
    q.cancel(cancelled);
    expect(fake.pendingTimers()).toBe(1);
    await fake.advance(1_000);
    expect(order).toEqual(['w100', 'm200b', 'm300']);
    expect(q.size).toBe(0);
    expect(fake.pendingTimers()).toBe(0);
  });

  it('keeps running when a callback throws', async () => {
    const fake = new FakeClock();
    const errors: unknown[] = [];
    const q = new TimerQueue(fake, (e) => errors.push(e));
    let ran = false;
    q.after(10, () => {
      throw new Error('bad');
    });
    q.after(10, () => {
      ran = true;
    });
    await fake.advance(10);
    expect(ran).toBe(true);
    expect(errors).toHaveLength(1);
  });

  it('wakes at least every WALL_CHECK_MS, never with a delay beyond the setTimeout limit', async () => {
    const fake = new FakeClock();
    const delays: number[] = [];
    const setTimer = fake.setTimer.bind(fake);
    fake.setTimer = (cb, ms) => {
      delays.push(ms);
      return setTimer(cb, ms);
    };
    const q = new TimerQueue(fake, () => {});
    let ran = false;
    q.after(MAX_TIMER_MS * 2, () => {
      ran = true;
    });
    await fake.advance(WALL_CHECK_MS * 10);
    expect(delays.slice(0, 10)).toEqual(Array(10).fill(WALL_CHECK_MS));
    expect(fake.pendingTimers()).toBe(1);
    expect(ran).toBe(false);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER_MS);
  });

  it('clear() drops everything and leaves no timer', () => {
    const fake = new FakeClock();
    const q = new TimerQueue(fake, () => {});
    for (let i = 0; i < 100; i++) q.after(i * 10, () => {});
    expect(fake.pendingTimers()).toBe(1);
    q.clear();
    expect(q.size).toBe(0);
    expect(fake.pendingTimers()).toBe(0);
  });

  it('removes arbitrary entries from a large heap correctly', async () => {
    const fake = new FakeClock();
    const q = new TimerQueue(fake, () => {});
    const fired: number[] = [];
    const entries = Array.from({ length: 500 }, (_, i) => {
      const due = (i * 7919) % 1000;
      return { due, entry: q.after(due, () => fired.push(due)) };
    });
    const kept = entries.filter((_, i) => i % 3 !== 0);
    for (const e of entries.filter((_, i) => i % 3 === 0)) q.cancel(e.entry);
    await fake.advance(1_000);
    expect(fired).toEqual(kept.map((e) => e.due).sort((a, b) => a - b));
  });

  it('one wake runs every wall-clock entry whose wall time is reached, even one keyed a fraction of a ms later', async () => {
    const fake = new FakeClock();
    let extra = 0; // monotonic time read a fraction of a ms later while keying the second entry
    const clock: Clock = {
      now: () => fake.now(),
      monotonic: () => fake.monotonic() + extra,
      setTimer: (callback, ms) => fake.setTimer(callback, ms),
      clearTimer: (handle) => fake.clearTimer(handle),
      sleep: (ms, signal) => fake.sleep(ms, signal),
    };
    const q = new TimerQueue(clock, (e) => {
      throw e;
    });
    const wall = fake.now() + 1_000;
    const ran: string[] = [];
    q.atWall(wall, () => ran.push('a'));
    extra = 0.4;
    q.atWall(wall, () => ran.push('b')); // keyed 0.4 ms of monotonic time after 'a'
    q.atWall(wall + 1, () => ran.push('later')); // its wall time is not reached on that wake
    extra = 0;
    await fake.advance(1_000);
    expect(ran).toEqual(['a', 'b']);
    await fake.advance(2); // its own wake (keyed 0.4 ms late too: at 1 001.4 ms)
    expect(ran).toEqual(['a', 'b', 'later']);
  });
});
