import { toError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Trigger } from '../../trigger.js';
import type { CronTrigger } from '../../triggers/cron.js';
import type { NormalizedJob } from './job.js';

/** Most excluded fires skipped in a row when looking for a job's next fire that is not excluded. */
const MAX_EXCLUDED_IN_A_ROW = 10_000;

/** The job's zone, in which its `exclude` calendar is read: its cron trigger's `tz`, else `UTC`. */
export function jobZone(job: NormalizedJob): string {
  return (job.trigger as Partial<CronTrigger>).tz ?? 'UTC';
}

/**
 * Why `job`'s fire at `fireAt` is excluded by its `exclude` calendar, or `null` (no calendar, not
 * excluded). A calendar that throws excludes nothing: the error is logged and the fire goes on
 * (a broken filter never drops a fire in silence).
 */
export function exclusionOf(job: NormalizedJob, fireAt: number, log?: Logger): string | null {
  if (job.exclude === null) return null;
  try {
    return job.exclude.excludedBy(fireAt, jobZone(job));
  } catch (error) {
    log?.error("fleetcron: the job's exclude calendar threw; the fire is not excluded", {
      job: job.name,
      fireAt: new Date(fireAt).toISOString(),
      calendar: job.exclude.describe(),
      error: toError(error),
    });
    return null;
  }
}

/**
 * `job`'s trigger without its excluded fires (the trigger itself when it has no calendar): what
 * catch-up walks, so an excluded fire is never owed. Gives up (no next fire) after
 * {@link MAX_EXCLUDED_IN_A_ROW} excluded fires in a row.
 */
export function includedFires(job: NormalizedJob): Trigger {
  const { trigger } = job;
  if (job.exclude === null) return trigger;
  return {
    next(after: Date): Date | null {
      let at = after;
      for (let i = 0; i < MAX_EXCLUDED_IN_A_ROW; i++) {
        const next = trigger.next(at);
        if (next === null || exclusionOf(job, next.getTime()) === null) return next;
        at = next;
      }
      return null;
    },
    describe: () => `${trigger.describe()} excluding ${job.exclude?.describe()}`,
  };
}
