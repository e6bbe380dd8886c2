import type { CalendarSpec } from './calendar-spec.js';

/**
 * The fires a job must not run: public holidays, freeze windows, maintenance nights. A job's
 * `exclude` calendar is asked about each fire before it is claimed; an excluded fire is not
 * claimed anywhere in the fleet (it is not missed either: catch-up does not owe it).
 */
export interface Calendar {
  /**
   * Why the fire at `fireAt` (epoch ms) is excluded (a short reason shown in logs, events, the
   * fleet view and the CLI, e.g. `holiday: Christmas Day`), or `null` when it is not. Dates and
   * weekly windows are read in `zone` (the job's IANA zone: its cron trigger's `tz`, else `UTC`)
   * unless the calendar fixes a zone of its own. Must be pure (the same answer on every
   * instance) and fast: it is called once per fire.
   */
  excludedBy(fireAt: number, zone: string): string | null;
  /** A short human description, e.g. `exclusions(3 dates, 1 weekly window)`. */
  describe(): string;
  /**
   * The calendar as JSON, so any process can rebuild it (`calendarFromSpec`) from the fleet
   * registry: set by `exclusions()`, `anyOf()` and the calendars of `@fleetcron/calendar`,
   * absent on custom ones (the fleet view then shows only the description).
   */
  readonly spec?: CalendarSpec;
}
