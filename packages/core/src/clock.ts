/** Opaque handle of a timer set through a {@link Clock}. */
export interface TimerHandle {
  readonly __timer?: never;
}

/**
 * Where fleetcron reads time and sets timers. The scheduler never touches `Date.now()` or
 * `setTimeout` directly, so tests drive it with {@link FakeClock} and fleets can be simulated
 * with skewed clocks ({@link offsetClock}).
 */
export interface Clock {
  /** Wall-clock time in epoch milliseconds. May be wrong (skew) and may jump (NTP steps). */
  now(): number;
  /** Milliseconds from an arbitrary origin that never goes backwards; used for durations. */
  monotonic(): number;
  /** Calls `callback` after about `ms` milliseconds of monotonic time. */
  setTimer(callback: () => void, ms: number): TimerHandle;
  /** Cancels a timer; a no-op for timers that already fired or were cleared. */
  clearTimer(handle: TimerHandle): void;
  /** Resolves after `ms` milliseconds; rejects with `signal.reason` when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Largest delay `setTimeout` accepts (2^31 − 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Implements {@link Clock.sleep} on top of `setTimer`, for any clock. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clock.clearTimer(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

class RealClock implements Clock {
  now(): number {
    return Date.now();
  }
  monotonic(): number {
    return performance.now();
  }
  setTimer(callback: () => void, ms: number): TimerHandle {
    return setTimeout(callback, Math.min(Math.max(0, ms), MAX_TIMER_MS)) as unknown as TimerHandle;
  }
  clearTimer(handle: TimerHandle): void {
    clearTimeout(handle as unknown as ReturnType<typeof setTimeout>);
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }
}

/** The process's real clock: `Date.now()`, `performance.now()` and `setTimeout`. */
export const realClock: Clock = new RealClock();

/**
 * A view of `base` whose wall clock reads `offsetMs` ahead (positive) or behind (negative).
 * Timers and monotonic time are shared with `base`. Used to simulate skewed instances.
 */
export function offsetClock(base: Clock, offsetMs: number): Clock {
  const view: Clock = {
    now: () => base.now() + offsetMs,
    monotonic: () => base.monotonic(),
    setTimer: (callback, ms) => base.setTimer(callback, ms),
    clearTimer: (handle) => base.clearTimer(handle),
    sleep: (ms, signal) => sleepOn(view, ms, signal),
  };
  return view;
}
