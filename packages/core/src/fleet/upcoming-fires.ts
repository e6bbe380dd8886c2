import type { Calendar } from '../calendar/calendar.js';
import { calendarFromSpec } from '../calendar/calendar-from-spec.js';
import type { RegisteredJob } from '../registry.js';
import { nextFires } from './trigger-spec.js';
import { type ZonedTime, zonedTime } from './zoned-time.js';

/** A next fire of a job as the fleet view lists it. */
export interface UpcomingFire extends ZonedTime {
  /**
   * Why the job's `exclude` calendar excludes this fire (e.g. `holiday: Christmas Day`): the
   * scheduler does not run it. Absent when the fire runs, or when the calendar is custom (no
   * spec) and so cannot be evaluated outside the instances.
   */
  excluded?: string;
}

/** The zone a job's fires and calendar are read in: its cron trigger's `tz`, else `UTC`. */
export function jobZone(job: Pick<RegisteredJob, 'spec'>): string {
  return job.spec?.kind === 'cron' ? job.spec.tz : 'UTC';
}

/**
 * The next `count` fires of a registered job strictly after `after`, in UTC and its zone,
 * excluded ones kept and marked with the reason (so a view shows "25 Dec: holiday" rather than
 * silently jumping over it). Empty for a custom trigger. A calendar spec this version cannot read
 * (a newer kind) marks nothing, as a custom calendar does. Fires before the job's `startAt` or
 * after its `endAt` are not listed.
 */
export function upcomingFires(job: RegisteredJob, after: number, count: number): UpcomingFire[] {
  if (!job.spec) return [];
  const zone = jobZone(job);
  const calendar = readableCalendar(job);
  // no fire before startAt, none after endAt (the job's bounds, when it has them)
  const from = job.startAt === undefined ? after : Math.max(after, job.startAt - 1);
  const fires = nextFires(job.spec, from, count).filter(
    (at) => job.endAt === undefined || at <= job.endAt,
  );
  return fires.map((at) => {
    const fire: UpcomingFire = zonedTime(at, zone);
    const reason = calendar?.excludedBy(at, zone) ?? null;
    if (reason !== null) fire.excluded = reason;
    return fire;
  });
}

function readableCalendar(job: RegisteredJob): Calendar | null {
  const spec = job.exclude?.spec;
  if (!spec) return null;
  try {
    return calendarFromSpec(spec);
  } catch {
    return null;
  }
}
