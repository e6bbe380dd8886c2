import { JobTimeoutError } from '../errors.js';
import type { Middleware } from '../middleware.js';
import { assertPositiveMs } from '../validate.js';

/**
 * Gives the rest of the chain `ms` milliseconds (on `ctx.clock`). It runs with a `ctx.signal`
 * that also aborts, with a {@link JobTimeoutError} as reason, when the time is up; the run then
 * rejects with that error at once, even if the job ignores its signal (the job's late result is
 * dropped). The timer is cleared as soon as the run settles.
 *
 * Order matters: `[retry(), timeout(ms)]` limits each attempt; `[timeout(ms), retry()]` limits all
 * attempts together (its abort also stops the retries).
 *
 * @throws InvalidOptionError (field `timeout`) unless `ms` is a positive number.
 */
export function timeout(ms: number): Middleware {
  assertPositiveMs('timeout', ms);
  return (ctx, next) => {
    const own = new AbortController();
    const signal = AbortSignal.any([ctx.signal, own.signal]);
    return new Promise<void>((resolve, reject) => {
      const timer = ctx.clock.setTimer(() => {
        const error = new JobTimeoutError(ctx.job, ms);
        own.abort(error);
        reject(error);
      }, ms);
      next({ ...ctx, signal })
        .then(resolve, reject)
        .finally(() => ctx.clock.clearTimer(timer));
    });
  };
}
