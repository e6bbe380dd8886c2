import type { TimerHandle } from '@fleetcron/core';
import { settleWithin, type TimerSource } from '@fleetcron/core/backend';

/** Real timers that never keep the process alive (unref'd). */
const unrefTimers: TimerSource = {
  setTimer(callback, ms) {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer as unknown as TimerHandle;
  },
  clearTimer(handle) {
    clearTimeout(handle as unknown as NodeJS.Timeout);
  },
};

/**
 * Settles like `promise`, or rejects after `ms` with a timeout error: core's deadline helper
 * (`settleWithin`) on unref'd timers. A late rejection of `promise` is handled, so it is never
 * unhandled; the timer is cleared when `promise` settles and never keeps the process alive.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return settleWithin(
    promise,
    ms,
    () => new Error(`${what} timed out after ${ms} ms (commandTimeoutMs)`),
    unrefTimers,
  );
}
