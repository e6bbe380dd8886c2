import { type Calendar, InvalidCalendarError } from '@fleetcron/core';
import Holidays from 'date-holidays';
import { ExpandedExclusions } from './expanded-exclusions.js';
import { readHorizon } from './horizon.js';

/** Kinds of holidays `date-holidays` knows. */
export type HolidayType = 'public' | 'bank' | 'school' | 'optional' | 'observance';

const TYPES: readonly HolidayType[] = ['public', 'bank', 'school', 'optional', 'observance'];
const FIELD = 'publicHolidays';

/** Options of {@link publicHolidays}. */
export interface PublicHolidaysOptions {
  /** ISO 3166-1 alpha-2 country code, e.g. `'DE'`, `'US'`. */
  country: string;
  /** State or province code of the country, e.g. `'BY'` (Bavaria), `'CA'` (California). */
  state?: string;
  /** Region code within the state, e.g. `'A'` (Augsburg in Bavaria). */
  region?: string;
  /** Which kinds of holidays to exclude. Default `['public']`. */
  types?: readonly HolidayType[];
  /** First day of the horizon, `'YYYY-MM-DD'`, inclusive. */
  from: string;
  /** Last day of the horizon, `'YYYY-MM-DD'`, inclusive. */
  to: string;
  /** Language of the holiday names in the reasons (ISO 639-1). Default `'en'`. */
  language?: string;
}

/**
 * A calendar of a country's (state's, region's) holidays between `from` and `to`, from
 * `date-holidays`: each holiday is excluded with the reason `holiday: <name>` (names of one day
 * joined by ` / `). A whole-day holiday is its local date; a part-day one (`bank` holidays such as
 * Christmas Eve from 14:00 in Germany) is a range of local times. Dates are read in the job's
 * zone, like core's `exclusions()`.
 *
 * The holidays are expanded once, here: the calendar's `spec` is core `exclusions` (explicit
 * dates and ranges), so every process rebuilds it with `@fleetcron/core` alone, and every
 * instance answers the same whatever its `date-holidays` version. Fires after `to` are not
 * excluded: rebuild the calendar with a later horizon before then (at each deploy, say).
 *
 * @throws InvalidCalendarError (`INVALID_CALENDAR`) naming the field (`publicHolidays.country`,
 *   `.state`, `.region`, `.types[i]`, `.from`, `.to`) for an unknown code, type or date.
 */
export function publicHolidays(options: PublicHolidaysOptions): Calendar {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidCalendarError(
      FIELD,
      'must be an object { country, state?, region?, types?, from, to }.',
    );
  }
  const horizon = readHorizon(options, FIELD);
  const { country, state, region } = readPlace(options);
  const types = readTypes(options.types);
  const language = options.language ?? 'en';
  if (typeof language !== 'string' || !/^[a-z]{2}$/i.test(language)) {
    throw new InvalidCalendarError(
      `${FIELD}.language`,
      `${JSON.stringify(language)} is not an ISO 639-1 code such as "en".`,
    );
  }
  const holidays = new Holidays(country, state ?? '', region ?? '', {
    languages: [language],
    types: [...types],
  });
  const expanded = new ExpandedExclusions();
  for (const year of horizon.years) {
    for (const holiday of holidays.getHolidays(year, language)) {
      if (!types.includes(holiday.type as HolidayType)) continue;
      const date = holiday.date.slice(0, 10);
      if (date < horizon.from || date > horizon.to) continue;
      const reason = `holiday: ${holiday.name}`;
      const time = holiday.date.slice(11, 16);
      const hours = (holiday.end.getTime() - holiday.start.getTime()) / 3_600_000;
      const days = Math.round(hours / 24);
      if (time === '00:00' && Math.abs(hours - days * 24) <= 1 && days >= 1) {
        if (days === 1) expanded.addDate(date, reason);
        else expanded.addRange({ from: date, to: addDays(date, days - 1), reason });
      } else {
        // a part-day holiday: local start plus its length (date-holidays' part days end by midnight)
        const start = Date.parse(`${date}T${time}:00Z`);
        const end = new Date(start + Math.round(hours * 60) * 60_000).toISOString().slice(0, 16);
        expanded.addRange({ from: `${date}T${time}`, to: end, reason });
      }
    }
  }
  const place = [country, state, region].filter((p) => p).join('-');
  return expanded.toCalendar(
    `publicHolidays(${place} ${types.join(',')} ${horizon.from}..${horizon.to}: ${expanded.size} entries)`,
    FIELD,
  );
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function readPlace(options: PublicHolidaysOptions): {
  country: string;
  state?: string;
  region?: string;
} {
  const lookup = new Holidays();
  const codes = (map: Record<string, string> | undefined): string[] => Object.keys(map ?? {});
  const check = (field: string, value: unknown, known: string[], of: string): string => {
    const code = typeof value === 'string' ? value.toUpperCase() : '';
    if (!known.includes(code)) {
      throw new InvalidCalendarError(
        `${FIELD}.${field}`,
        `${JSON.stringify(value)} is not a ${field} code${of}; known: ${known.slice(0, 60).join(', ')}${known.length > 60 ? ', ...' : ''}.`,
      );
    }
    return code;
  };
  const country = check(
    'country',
    options.country,
    codes(lookup.getCountries()),
    ' (ISO 3166-1 alpha-2)',
  );
  if (options.state === undefined) {
    if (options.region !== undefined) {
      throw new InvalidCalendarError(`${FIELD}.region`, 'needs a state: give state too.');
    }
    return { country };
  }
  const state = check('state', options.state, codes(lookup.getStates(country)), ` of ${country}`);
  if (options.region === undefined) return { country, state };
  const region = check(
    'region',
    options.region,
    codes(lookup.getRegions(country, state)),
    ` of ${country}-${state}`,
  );
  return { country, state, region };
}

function readTypes(value: unknown): readonly HolidayType[] {
  if (value === undefined) return ['public'];
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidCalendarError(
      `${FIELD}.types`,
      `must be a non-empty array of ${TYPES.join(', ')}.`,
    );
  }
  value.forEach((type, i) => {
    if (!TYPES.includes(type)) {
      throw new InvalidCalendarError(
        `${FIELD}.types[${i}]`,
        `${JSON.stringify(type)} is not a holiday type; use ${TYPES.join(', ')}.`,
      );
    }
  });
  return [...new Set(value as HolidayType[])];
}
