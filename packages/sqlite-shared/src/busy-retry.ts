/**
 * Fair waiting for the write lock. SQLite's own busy handler sleeps in steps of up to 100 ms, so
 * under contention a waiter keeps losing the race to writers that arrive later (measured: single
 * claims waiting over 1 s with 4 writers). Adapter connections therefore run with `busy_timeout`
 * 0 and retry a transaction that met `SQLITE_BUSY` here, sleeping 0.05 to 2 ms (jittered,
 * doubling) until the caller's `busyTimeoutMs` has passed. A `BEGIN IMMEDIATE` that failed BUSY
 * did nothing, so retrying it is safe. Imports nothing from `@fleetcron/core` (worker threads).
 */

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** True for `SQLITE_BUSY` and its extended codes (another connection holds the lock). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/** Runs `fn`, retrying it while it throws `SQLITE_BUSY`, for at most `timeoutMs`. */
export function retryBusy<T>(fn: () => T, timeoutMs: number): T {
  const deadline = performance.now() + timeoutMs;
  let pause = 0.05;
  for (;;) {
    try {
      return fn();
    } catch (error) {
      const left = deadline - performance.now();
      if (!isBusy(error) || left <= 0) throw error;
      Atomics.wait(sleeper, 0, 0, Math.min(left, pause * (0.5 + Math.random())));
      pause = Math.min(pause * 2, 2);
    }
  }
}
