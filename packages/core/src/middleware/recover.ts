import { toError } from '../errors.js';
import type { Middleware } from '../middleware.js';

/**
 * Turns whatever the rest of the chain throws or rejects with (including non-Error values such
 * as strings) into an `Error`, logs it with `ctx.log.error`, and rethrows it, so the scheduler
 * records a failed run with a readable message. Place it first (outermost) to cover the whole
 * chain. The scheduler also catches failures; `recover()` adds the normalisation and the log line.
 */
export function recover(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const error = toError(thrown);
      ctx.log.error('job run failed', {
        job: ctx.job,
        fireAt: ctx.fireAt.toISOString(),
        attempt: ctx.attempt,
        error: error.message,
        stack: error.stack,
      });
      throw error;
    }
  };
}
