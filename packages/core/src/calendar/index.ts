/** Calendars of excluded fires (a job's `exclude` option). */
export type { Calendar } from './calendar.js';
