import { scheduleJobName } from '../schedules/schedule.js';
import { hasSchedules } from '../schedules/schedule-store.js';
import type { Store } from '../store.js';

/** Schedules read per `listSchedules()` call (its largest page). */
const SCHEDULE_PAGE = 1000;

/**
 * The dead-man's switches stored with the schedules: for every enabled stored schedule with
 * `options.overdueAfterMs`, its Scheduler job (`schedule:<id>`) and that grace. Empty for a store
 * that keeps no schedules. Read on every watchdog run (one call per 1,000 schedules), so an edit
 * applies from the next run.
 */
export async function scheduleDeadlines(store: Store): Promise<Map<string, number>> {
  const deadlines = new Map<string, number>();
  if (!hasSchedules(store)) return deadlines;
  let cursor: string | null = null;
  do {
    const page = await store.listSchedules({ limit: SCHEDULE_PAGE, cursor });
    for (const schedule of page.schedules) {
      const graceMs = schedule.options.overdueAfterMs;
      if (schedule.enabled && graceMs !== undefined) {
        deadlines.set(scheduleJobName(schedule.id), graceMs);
      }
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  return deadlines;
}
