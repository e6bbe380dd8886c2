/**
 * The JSON form of a calendar built by `exclusions()` or `anyOf()` (its `spec`), published
 * in the fleet registry so any process (CLI, console) rebuilds it with `calendarFromSpec`. The
 * calendars of `@fleetcron/calendar` publish their expanded result in this form too.
 */
export type CalendarSpec = ExclusionsSpec | AnyOfSpec;

/** An excluded local date, `'YYYY-MM-DD'`, with an optional reason. */
export type ExcludedDate = string | { date: string; reason?: string };

/**
 * An excluded range. `from` and `to` are each a date `'YYYY-MM-DD'`, a local date-time
 * `'YYYY-MM-DDTHH:MM'` (seconds optional) read in the calendar's zone, or an instant with its
 * offset (`'2026-12-24T17:00:00Z'`, `'…+01:00'`). `from` is inclusive. A date `to` is inclusive
 * (the range ends when that day ends); a date-time or instant `to` is exclusive.
 */
export interface ExcludedRange {
  from: string;
  to: string;
  reason?: string;
}

/** A weekday: `0`-`6` (0 = Sunday, as in cron) or a three-letter English name (`'sat'`). */
export type Weekday = number | 'sun' | 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat';

/**
 * A window excluded every week on `days`, from `from` (inclusive) to `to` (exclusive), both
 * `'HH:MM'` local times; `to` may be `'24:00'` (the end of the day). A `to` at or before `from`
 * crosses midnight: `{ days: ['fri'], from: '22:00', to: '06:00' }` is Friday 22:00 to Saturday
 * 06:00. The window opens on each listed day.
 */
export interface WeeklyWindow {
  days: readonly Weekday[];
  from: string;
  to: string;
  reason?: string;
}

/** The options of `exclusions()`, which are also its JSON spec (`kind: 'exclusions'`). */
export interface ExclusionsOptions {
  /**
   * The IANA zone in which dates, local date-times and weekly windows are read. Default: the
   * zone the scheduler asks with (the job's zone: its cron trigger's `tz`, else `UTC`).
   */
  zone?: string;
  /** Whole local days excluded. */
  dates?: readonly ExcludedDate[];
  /** Spans excluded (freeze windows, holidays of several days). */
  ranges?: readonly ExcludedRange[];
  /** Windows excluded every week (weekends, maintenance nights). */
  weekly?: readonly WeeklyWindow[];
}

/** The spec of an `exclusions()` calendar: its options, weekdays as numbers. */
export interface ExclusionsSpec extends ExclusionsOptions {
  kind: 'exclusions';
}

/** The spec of an `anyOf()` calendar: a fire is excluded when one of them excludes it. */
export interface AnyOfSpec {
  kind: 'anyOf';
  calendars: CalendarSpec[];
}
