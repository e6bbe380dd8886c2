import { describe, expect, it } from 'vitest';
import { anyOf } from '../../src/calendar/any-of.js';
import type { Calendar } from '../../src/calendar/calendar.js';
import { calendarFromSpec, calendarSpecOf } from '../../src/calendar/calendar-from-spec.js';
import type { CalendarSpec, ExclusionsOptions } from '../../src/calendar/calendar-spec.js';
import { exclusions, MAX_CALENDAR_ENTRIES } from '../../src/calendar/exclusions.js';
import { isFleetcronError } from '../../src/errors.js';

const t = (iso: string): number => Date.parse(iso);

const OPTIONS: ExclusionsOptions = {
  dates: ['2026-12-24', { date: '2026-12-25', reason: 'holiday: Christmas Day' }],
  ranges: [{ from: '2026-08-01', to: '2026-08-14', reason: 'summer freeze' }],
  weekly: [{ days: ['sat', 'sun'], from: '00:00', to: '24:00', reason: 'weekend' }],
};

/** Instants spread over 2026, every 7 h 13 min, so they land at every hour and weekday. */
function sample(): number[] {
  const out: number[] = [];
  for (let at = t('2026-01-01T00:00:00Z'); at < t('2027-01-01T00:00:00Z'); at += 26_000_000) {
    out.push(at);
  }
  return out;
}

function answers(calendar: Calendar, zone: string): Array<string | null> {
  return sample().map((at) => calendar.excludedBy(at, zone));
}

describe('calendar specs', () => {
  it('exclusions() publishes its options as JSON; calendarFromSpec rebuilds the same calendar', () => {
    const calendar = exclusions(OPTIONS);
    const spec = calendarSpecOf(calendar);
    expect(spec).toEqual({
      kind: 'exclusions',
      dates: OPTIONS.dates,
      ranges: OPTIONS.ranges,
      weekly: [{ days: [6, 0], from: '00:00', to: '24:00', reason: 'weekend' }],
    });
    const rebuilt = calendarFromSpec(JSON.parse(JSON.stringify(spec)) as CalendarSpec);
    for (const zone of ['UTC', 'Europe/Berlin', 'Pacific/Auckland']) {
      const expected = answers(calendar, zone);
      expect(expected.filter((a) => a !== null).length).toBeGreaterThan(300);
      expect(answers(rebuilt, zone)).toEqual(expected);
    }
    expect(rebuilt.describe()).toBe(calendar.describe());
  });

  it('anyOf() excludes what any part excludes, with the first reason; its spec nests', () => {
    const weekends = exclusions({ weekly: [{ days: ['sat', 'sun'], from: '00:00', to: '24:00' }] });
    const christmas = exclusions({ dates: [{ date: '2026-12-25', reason: 'Christmas' }] });
    const both = anyOf(christmas, weekends);
    expect(both.excludedBy(t('2026-12-25T12:00:00Z'), 'UTC')).toBe('Christmas'); // a Friday
    expect(both.excludedBy(t('2026-12-26T12:00:00Z'), 'UTC')).toBe(
      'weekly window sat,sun 00:00-24:00',
    );
    expect(both.excludedBy(t('2026-12-28T12:00:00Z'), 'UTC')).toBeNull();
    expect(both.spec?.kind).toBe('anyOf');
    const rebuilt = calendarFromSpec(both.spec as CalendarSpec);
    expect(answers(rebuilt, 'Europe/Berlin')).toEqual(answers(both, 'Europe/Berlin'));
    expect(both.describe()).toBe('anyOf(exclusions(1 date), exclusions(1 weekly window))');
  });

  it('a custom calendar has no spec, and neither has an anyOf() that holds one', () => {
    const custom: Calendar = {
      excludedBy: (at) => (new Date(at).getUTCDate() === 13 ? 'the 13th' : null),
      describe: () => 'custom',
    };
    expect(calendarSpecOf(custom)).toBeNull();
    const mixed = anyOf(exclusions({ dates: ['2026-01-01'] }), custom);
    expect(calendarSpecOf(mixed)).toBeNull();
    expect(mixed.excludedBy(t('2026-02-13T00:00:00Z'), 'UTC')).toBe('the 13th');
  });
});

describe('bad calendars: INVALID_CALENDAR naming the field, at construction', () => {
  const cases: Array<[string, () => unknown, string, RegExp]> = [
    [
      'a date that does not exist',
      () => exclusions({ dates: ['2026-12-24', '2026-12-25', '2026-02-30'] }),
      'exclude.dates[2]',
      /^exclude\.dates\[2\]: "2026-02-30" is not a date; use YYYY-MM-DD/,
    ],
    [
      'a date without zero padding',
      () => exclusions({ dates: ['2026-2-3'] }),
      'exclude.dates[0]',
      /is not a date/,
    ],
    [
      'a bad date in an object',
      () => exclusions({ dates: [{ date: '25.12.2026', reason: 'x' }] }),
      'exclude.dates[0].date',
      /is not a date/,
    ],
    [
      'a date listed twice',
      () => exclusions({ dates: ['2026-12-25', '2026-12-24', '2026-12-25'] }),
      'exclude.dates[2]',
      /2026-12-25 is listed twice/,
    ],
    [
      'an empty reason',
      () => exclusions({ dates: [{ date: '2026-12-25', reason: ' ' }] }),
      'exclude.dates[0].reason',
      /non-empty string/,
    ],
    [
      'a range that ends before it starts',
      () => exclusions({ ranges: [{ from: '2026-12-28', to: '2026-12-27' }] }),
      'exclude.ranges[0].to',
      /is not after from/,
    ],
    [
      'an empty range of date-times',
      () => exclusions({ ranges: [{ from: '2026-12-28T10:00', to: '2026-12-28T10:00' }] }),
      'exclude.ranges[0].to',
      /is not after from/,
    ],
    [
      'instants in the wrong order',
      () =>
        exclusions({ ranges: [{ from: '2026-06-01T10:00:00Z', to: '2026-06-01T11:00:00+02:00' }] }),
      'exclude.ranges[0].to',
      /is not after from/,
    ],
    [
      'a range boundary that is not a time',
      () => exclusions({ ranges: [{ from: 'tomorrow', to: '2026-12-27' }] }),
      'exclude.ranges[0].from',
      /is not a date or time/,
    ],
    [
      'a date-time at 24:00',
      () => exclusions({ ranges: [{ from: '2026-12-27', to: '2026-12-27T24:00' }] }),
      'exclude.ranges[0].to',
      /is not a date or time/,
    ],
    [
      'an unknown weekday',
      () =>
        exclusions({ weekly: [{ days: ['sat', 'sunday' as 'sun'], from: '00:00', to: '24:00' }] }),
      'exclude.weekly[0].days[1]',
      /"sunday" is not a weekday; use 0-6/,
    ],
    [
      'weekday 7',
      () => exclusions({ weekly: [{ days: [7], from: '00:00', to: '24:00' }] }),
      'exclude.weekly[0].days[0]',
      /is not a weekday/,
    ],
    [
      'no weekdays',
      () => exclusions({ weekly: [{ days: [], from: '00:00', to: '24:00' }] }),
      'exclude.weekly[0].days',
      /non-empty array/,
    ],
    [
      'a from of 24:00',
      () => exclusions({ weekly: [{ days: [1], from: '24:00', to: '02:00' }] }),
      'exclude.weekly[0].from',
      /not a time of day/,
    ],
    [
      'a to past 24:00',
      () => exclusions({ weekly: [{ days: [1], from: '22:00', to: '24:01' }] }),
      'exclude.weekly[0].to',
      /not a time of day/,
    ],
    [
      'an unknown key',
      () => exclusions({ weekends: true } as ExclusionsOptions),
      'exclude.weekends',
      /not an option/,
    ],
    [
      'dates not an array',
      () => exclusions({ dates: '2026-12-25' as unknown as string[] }),
      'exclude.dates',
      /must be an array/,
    ],
    [
      'too many entries',
      () =>
        exclusions({
          ranges: Array.from({ length: MAX_CALENDAR_ENTRIES + 1 }, () => ({
            from: '2026-01-01',
            to: '2026-01-02',
          })),
        }),
      'exclude',
      /more than 5000/,
    ],
    [
      'an unknown spec kind',
      () => calendarFromSpec({ kind: 'holidays' } as unknown as CalendarSpec),
      'exclude.kind',
      /not a calendar kind/,
    ],
    [
      'a bad entry inside anyOf',
      () =>
        calendarFromSpec({
          kind: 'anyOf',
          calendars: [{ kind: 'exclusions' }, { kind: 'exclusions', dates: ['2026-13-01'] }],
        }),
      'exclude.calendars[1].dates[0]',
      /is not a date/,
    ],
    ['anyOf of a non-calendar', () => anyOf({} as Calendar), 'exclude[0]', /must be a Calendar/],
  ];
  it.each(cases)('%s', (_name, build, field, message) => {
    let error: unknown;
    try {
      build();
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_CALENDAR'), String(error)).toBe(true);
    expect((error as { field?: string }).field).toBe(field);
    expect((error as Error).message).toMatch(message);
  });

  it('an unknown zone is UNKNOWN_TIMEZONE on exclude.zone', () => {
    let error: unknown;
    try {
      exclusions({ zone: 'Mars/Olympus', dates: ['2026-01-01'] });
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'UNKNOWN_TIMEZONE')).toBe(true);
    expect((error as { field?: string }).field).toBe('exclude.zone');
  });
});
