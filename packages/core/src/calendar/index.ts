/** Calendars of excluded fires (a job's `exclude` option). */
export { anyOf } from './any-of.js';
export type { Calendar } from './calendar.js';
export { calendarFromSpec, calendarSpecOf } from './calendar-from-spec.js';
export type {
  AnyOfSpec,
  CalendarSpec,
  ExcludedDate,
  ExcludedRange,
  ExclusionsOptions,
  ExclusionsSpec,
  Weekday,
  WeeklyWindow,
} from './calendar-spec.js';
export { exclusions, MAX_CALENDAR_ENTRIES, MAX_REASON_LENGTH } from './exclusions.js';
