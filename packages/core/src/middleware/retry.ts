import { type BackoffOptions, backoffPlan } from '../backoff.js';
import { InvalidOptionError, isFleetcronError } from '../errors.js';
import type { JobContext, Middleware } from '../middleware.js';
import { assertPositiveInteger } from '../validate.js';

/**
 * Exponential backoff of {@link retry}: the n-th retry waits up to
 * `min(maxMs, initialMs·factor^(n-1))`. Defaults: `initialMs` 1000, `maxMs` 30000, `factor` 2.
 */
export type RetryBackoff = BackoffOptions;

/** Options of {@link retry}. */
export interface RetryOptions {
  /** Total number of runs, the first included (1 = no retry). A positive integer. */
  attempts: number;
  /** Backoff between attempts; see {@link RetryBackoff} for defaults. */
  backoff?: RetryBackoff;
  /** `'full'` (default): wait a random time in [0, delay); `'none'`: wait exactly the delay. */
  jitter?: 'full' | 'none';
  /** Whether a failure is worth another attempt. Default: every failure (within the limits below). */
  retryIf?: (error: unknown, ctx: JobContext) => boolean;
  /** Random source in [0, 1) for jitter (tests pass a fixed one). Default `Math.random`. */
  random?: () => number;
}

/**
 * Runs the rest of the chain again when it fails, up to `attempts` runs in all, sleeping on
 * `ctx.clock` between them with exponential backoff and full jitter. Attempt `n` sees
 * `ctx.attempt + n - 1`. It never retries once `ctx.signal` is aborted (lease lost, scheduler
 * stopping past its drain deadline, or an outer `timeout()`), nor a `LeaseLostError`; a sleep
 * cut short by the signal rejects with the signal's reason. The last failure is rethrown.
 *
 * A `JobTimeoutError` from a `timeout()` placed after retry (`[retry(), timeout(ms)]`, a timeout
 * per attempt) is retried like any failure; a timeout placed before retry aborts the signal and
 * so ends the retries. The scheduler keeps renewing the job's lease while retry waits.
 *
 * @throws InvalidOptionError (fields `retry.attempts`, `retry.backoff.*`, `retry.jitter`,
 *   `retry.retryIf`, `retry.random`) for bad options, at creation.
 */
export function retry(options: RetryOptions): Middleware {
  const {
    attempts,
    backoff = {},
    jitter = 'full',
    retryIf = () => true,
    random = Math.random,
  } = options ?? ({} as RetryOptions);
  assertPositiveInteger('retry.attempts', attempts);
  const plan = backoffPlan('retry', backoff, { initialMs: 1000, maxMs: 30_000 }, jitter, random);
  if (typeof retryIf !== 'function') {
    throw new InvalidOptionError('retry.retryIf', 'must be a function (error, ctx) => boolean.');
  }

  return async (ctx, next) => {
    for (let n = 1; ; n++) {
      const attemptCtx = n === 1 ? ctx : { ...ctx, attempt: ctx.attempt + n - 1 };
      try {
        await next(attemptCtx);
        return;
      } catch (error) {
        if (
          n >= attempts ||
          ctx.signal.aborted ||
          isFleetcronError(error, 'LEASE_LOST') ||
          !retryIf(error, attemptCtx)
        ) {
          throw error;
        }
        const delay = plan.delayMs(n);
        ctx.log.warn('job attempt failed; retrying', {
          job: ctx.job,
          attempt: attemptCtx.attempt,
          delayMs: Math.round(delay),
          error: error instanceof Error ? error.message : String(error),
        });
        await ctx.clock.sleep(delay, ctx.signal);
      }
    }
  };
}
