import { type Clock, sleepOn, type TimerHandle } from './clock.js';

interface FakeTimer extends TimerHandle {
  at: number;
  seq: number;
  callback: () => void;
}

/** Lets pending promise callbacks and I/O run before the next fake timer fires. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock that only moves when a test moves it. `advance(ms)` fires every timer that falls due,
 * in order, letting promise chains settle between timers, so a scheduler under test behaves as
 * it would in real time without any wall-clock sleeping.
 */
export class FakeClock implements Clock {
  private wall: number;
  private mono = 0;
  private seq = 0;
  private readonly timers = new Set<FakeTimer>();

  /** @param start initial wall-clock time (epoch ms or Date); defaults to 2026-01-01T00:00:00Z. */
  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.wall = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.wall;
  }

  monotonic(): number {
    return this.mono;
  }

  setTimer(callback: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = {
      at: this.mono + Math.max(0, ms),
      seq: this.seq++,
      callback,
    };
    this.timers.add(timer);
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle as FakeTimer);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Number of timers currently pending (what a real process would hold open). */
  pendingTimers(): number {
    return this.timers.size;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and letting async work settle after
   * each one. Timers set while advancing fire too if they fall due before the end.
   */
  async advance(ms: number): Promise<void> {
    const end = this.mono + ms;
    await settle();
    for (;;) {
      const next = this.nextTimer();
      if (!next || next.at > end) break;
      this.moveTo(Math.max(next.at, this.mono)); // timers overdue after a freeze() fire now
      this.timers.delete(next);
      next.callback();
      await settle();
      await settle();
    }
    this.moveTo(end);
    await settle();
  }

  /** Advances to the given wall-clock time (epoch ms or Date). */
  async advanceTo(time: number | Date): Promise<void> {
    const target = typeof time === 'number' ? time : time.getTime();
    await this.advance(Math.max(0, target - this.wall));
  }

  /**
   * The process freezes for `ms` (a GC pause, SIGSTOP, a blocked event loop, a paused VM): wall
   * and monotonic time both move on by `ms` and NO timer fires. Timers that fell due fire late,
   * at the next {@link advance} (`advance(0)` fires them at once), so a test can first let other
   * callbacks run (resolve a pending I/O answer, then {@link flush}) the way a real process
   * runs them after a freeze, before its overdue timers.
   */
  freeze(ms: number): void {
    this.moveTo(this.mono + Math.max(0, ms));
  }

  /** Steps the wall clock by `ms` without moving monotonic time or firing timers (an NTP step). */
  jump(ms: number): void {
    this.wall += ms;
  }

  /** Lets pending promise callbacks run without moving time. */
  async flush(): Promise<void> {
    await settle();
    await settle();
  }

  private moveTo(mono: number): void {
    this.wall += mono - this.mono;
    this.mono = mono;
  }

  private nextTimer(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.timers) {
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
