import { WaitTimeoutError } from './errors.js';

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this many milliseconds. Default 10 000. */
  timeoutMs?: number;
  /** Pause between two polls. Default 50. */
  intervalMs?: number;
  /** What was awaited; used in the timeout error. A function is called only on timeout. */
  message?: string | (() => string);
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Polls `condition` until it returns (or resolves to) a truthy value, and returns that value.
 * A condition that throws or rejects counts as "not yet"; its last error becomes the `cause` of the
 * {@link WaitTimeoutError} thrown at the deadline. A condition call that hangs past the deadline
 * also ends the wait. Use it instead of sleeps in tests.
 *
 * @example
 * await waitFor(async () => (await redis.get('k')) === 'v', { timeoutMs: 5000, message: 'k = v' });
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Truthy<Awaited<T>>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  let attempts = 0;
  const fail = (): never => {
    const what = typeof options.message === 'function' ? options.message() : options.message;
    const reason =
      lastError === undefined
        ? ''
        : `; last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
    throw new WaitTimeoutError(
      `waitFor: ${what ?? 'condition'} not met within ${timeoutMs} ms (${attempts} attempts${reason})`,
      lastError,
    );
  };
  for (;;) {
    attempts += 1;
    const remaining = deadline - Date.now();
    try {
      const value = await withDeadline(Promise.resolve().then(condition), remaining);
      if (value.done) {
        if (value.value) return value.value as Truthy<Awaited<T>>;
        lastError = undefined;
      } else {
        return fail();
      }
    } catch (error) {
      lastError = error;
    }
    if (Date.now() + intervalMs > deadline) return fail();
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

async function withDeadline<T>(
  promise: Promise<T>,
  ms: number,
): Promise<{ done: true; value: T } | { done: false }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ done: false }>((resolve) => {
    timer = setTimeout(() => resolve({ done: false }), Math.max(0, ms));
  });
  const settled = promise.then((value) => ({ done: true as const, value }));
  // A condition that settles after the deadline must not become an unhandled rejection.
  settled.catch(() => {});
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
