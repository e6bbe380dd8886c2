/**
 * `@fleetcron/calendar`: calendars of excluded fires built from public-holiday data and
 * iCalendar files, expanded into core exclusions that any process rebuilds with
 * `@fleetcron/core` alone.
 *
 * @module @fleetcron/calendar
 */
export { type Horizon, MAX_HORIZON_YEARS } from './horizon.js';
export { type IcsCalendarOptions, icsCalendar, MAX_OCCURRENCES_PER_EVENT } from './ics-calendar.js';
export { type HolidayType, type PublicHolidaysOptions, publicHolidays } from './public-holidays.js';
