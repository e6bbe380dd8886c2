import { InvalidCalendarError } from '../errors.js';
import type { Calendar } from './calendar.js';
import type { CalendarSpec } from './calendar-spec.js';

/**
 * A {@link Calendar} that excludes a fire when any of `calendars` does, with the first one's
 * reason (in the order given): `anyOf(exclusions({ weekly: [...] }), await publicHolidays(...))`.
 * Its `spec` is `{ kind: 'anyOf', calendars }` when every calendar has a spec, else absent (the
 * fleet view then shows the description only).
 *
 * @throws InvalidCalendarError (field `exclude[i]`) for an argument that is not a Calendar.
 */
export function anyOf(...calendars: Calendar[]): Calendar {
  calendars.forEach((calendar, i) => {
    if (
      typeof calendar !== 'object' ||
      calendar === null ||
      typeof calendar.excludedBy !== 'function' ||
      typeof calendar.describe !== 'function'
    ) {
      throw new InvalidCalendarError(
        `exclude[${i}]`,
        'must be a Calendar (an object with excludedBy(fireAt, zone) and describe()).',
      );
    }
  });
  const all = [...calendars];
  const specs = all.map((c) => c.spec);
  const spec: CalendarSpec | undefined = specs.every((s) => s !== undefined)
    ? { kind: 'anyOf', calendars: specs as CalendarSpec[] }
    : undefined;
  const description = `anyOf(${all.map((c) => c.describe()).join(', ')})`;
  return {
    excludedBy(fireAt: number, zone: string): string | null {
      for (const calendar of all) {
        const reason = calendar.excludedBy(fireAt, zone);
        if (reason !== null) return reason;
      }
      return null;
    },
    describe: () => description,
    ...(spec === undefined ? {} : { spec }),
  };
}
