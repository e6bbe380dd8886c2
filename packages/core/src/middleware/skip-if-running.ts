import type { Middleware } from '../middleware.js';

/**
 * Skips a run (resolves without calling the rest of the chain, and logs it) while a previous
 * run of the same job, started through this middleware instance in this process, is still
 * running — robfig/cron's `SkipIfStillRunning`.
 *
 * This guard is local to one process. Across the fleet, overlap is prevented by the scheduler's
 * exclusive claims (`overlap: 'skip'`, the default), which also record a `skipped` execution;
 * use this middleware for jobs added with `overlap: 'allow'` that must still not overlap locally.
 */
export function skipIfRunning(): Middleware {
  const running = new Set<string>();
  return async (ctx, next) => {
    if (running.has(ctx.job)) {
      ctx.log.info('run skipped: the previous run of this job is still running here', {
        job: ctx.job,
        fireAt: ctx.fireAt.toISOString(),
      });
      return;
    }
    running.add(ctx.job);
    try {
      await next();
    } finally {
      running.delete(ctx.job);
    }
  };
}
