import { InvalidCalendarError } from '../errors.js';
import { anyOf } from './any-of.js';
import type { Calendar } from './calendar.js';
import type { CalendarSpec } from './calendar-spec.js';
import { buildExclusions } from './exclusions.js';

/** How deep `anyOf` specs may nest. */
const MAX_DEPTH = 8;

/**
 * The JSON spec of a calendar (`calendar.spec`: set by `exclusions`, `anyOf` and the calendars
 * of `@fleetcron/calendar`), a deep copy; `null` for a custom calendar without one.
 */
export function calendarSpecOf(calendar: Calendar): CalendarSpec | null {
  const spec = calendar.spec;
  if (typeof spec !== 'object' || spec === null) return null;
  return JSON.parse(JSON.stringify(spec)) as CalendarSpec;
}

/**
 * Rebuilds a calendar from its spec (as published in the fleet registry), so a process that does
 * not define the job (the CLI, the console) can tell which of its fires are excluded.
 *
 * @throws InvalidCalendarError (`INVALID_CALENDAR`) naming the field (`exclude`,
 *   `exclude.calendars[1].dates[0]`, ...) for an unknown kind or a bad entry.
 */
export function calendarFromSpec(spec: CalendarSpec): Calendar {
  return fromSpec(spec, 'exclude', 0);
}

function fromSpec(spec: CalendarSpec, field: string, depth: number): Calendar {
  if (typeof spec !== 'object' || spec === null) {
    throw new InvalidCalendarError(field, 'must be a calendar spec object with a kind.');
  }
  switch (spec.kind) {
    case 'exclusions':
      return buildExclusions(spec, field);
    case 'anyOf': {
      if (!Array.isArray(spec.calendars)) {
        throw new InvalidCalendarError(`${field}.calendars`, 'must be an array of calendar specs.');
      }
      if (depth >= MAX_DEPTH) {
        throw new InvalidCalendarError(field, `nests anyOf deeper than ${MAX_DEPTH} levels.`);
      }
      return anyOf(
        ...spec.calendars.map((c, i) => fromSpec(c, `${field}.calendars[${i}]`, depth + 1)),
      );
    }
    default:
      throw new InvalidCalendarError(
        `${field}.kind`,
        `${JSON.stringify((spec as { kind?: unknown }).kind)} is not a calendar kind; expected exclusions or anyOf.`,
      );
  }
}
