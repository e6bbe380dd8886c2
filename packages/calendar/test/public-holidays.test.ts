import { type CalendarSpec, calendarFromSpec, isFleetcronError } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { publicHolidays } from '../src/index.js';

const t = (iso: string): number => Date.parse(iso);
const noon = (date: string): number => t(`${date}T11:00:00Z`); // 12:00 in Berlin in winter, 13:00 in summer

describe('publicHolidays (date-holidays)', () => {
  it('Bavaria 2026: the public holidays, each its whole local day, with its English name', () => {
    const calendar = publicHolidays({
      country: 'DE',
      state: 'BY',
      from: '2026-01-01',
      to: '2026-12-31',
    });
    const zone = 'Europe/Berlin';
    const expected: Array<[string, string]> = [
      ['2026-01-01', "holiday: New Year's Day"],
      ['2026-01-06', 'holiday: Epiphany'],
      ['2026-04-03', 'holiday: Good Friday'],
      ['2026-04-06', 'holiday: Easter Monday'],
      ['2026-05-01', 'holiday: Labour Day'],
      ['2026-05-14', 'holiday: Ascension Day'],
      ['2026-05-25', 'holiday: Whit Monday'],
      ['2026-06-04', 'holiday: Corpus Christi'],
      ['2026-10-03', 'holiday: National Holiday'],
      ['2026-11-01', "holiday: All Saints' Day"],
      ['2026-12-25', 'holiday: Christmas Day'],
      ['2026-12-26', 'holiday: Boxing Day'],
    ];
    for (const [date, reason] of expected) {
      expect(calendar.excludedBy(noon(date), zone), date).toBe(reason);
    }
    // every day of the year: exactly the listed ones are excluded
    let excluded = 0;
    for (let day = t('2026-01-01T11:00:00Z'); day < t('2027-01-01T00:00:00Z'); day += 86_400_000) {
      if (calendar.excludedBy(day, zone) !== null) excluded++;
    }
    expect(excluded).toBe(expected.length);
    // the day is read in the job's zone: 2026-12-24T23:30Z is the 25th in Berlin only
    expect(calendar.excludedBy(t('2026-12-24T23:30:00Z'), zone)).toBe('holiday: Christmas Day');
    expect(calendar.excludedBy(t('2026-12-24T23:30:00Z'), 'UTC')).toBeNull();
    // outside the horizon nothing is excluded
    expect(calendar.excludedBy(noon('2027-01-01'), zone)).toBeNull();
    expect(calendar.describe()).toBe(
      'publicHolidays(DE-BY public 2026-01-01..2026-12-31: 12 entries)',
    );
  });

  it("its spec is plain exclusions: core alone rebuilds the same answers (the CLI's and console's case)", () => {
    const calendar = publicHolidays({ country: 'US', from: '2026-01-01', to: '2027-12-31' });
    const spec = JSON.parse(JSON.stringify(calendar.spec)) as CalendarSpec;
    expect(spec.kind).toBe('exclusions');
    const rebuilt = calendarFromSpec(spec);
    for (let day = t('2026-01-01T17:00:00Z'); day < t('2028-01-01T00:00:00Z'); day += 86_400_000) {
      expect(rebuilt.excludedBy(day, 'America/New_York')).toBe(
        calendar.excludedBy(day, 'America/New_York'),
      );
    }
    // a substitute day carries its own name
    expect(calendar.excludedBy(t('2026-07-03T17:00:00Z'), 'America/New_York')).toBe(
      'holiday: Independence Day (substitute day)',
    );
    expect(calendar.excludedBy(t('2026-11-26T17:00:00Z'), 'America/New_York')).toBe(
      'holiday: Thanksgiving Day',
    );
  });

  it('bank holidays that start at 14:00 are a range of local times', () => {
    const calendar = publicHolidays({
      country: 'DE',
      types: ['public', 'bank'],
      from: '2026-12-01',
      to: '2026-12-31',
    });
    const zone = 'Europe/Berlin';
    expect(calendar.excludedBy(t('2026-12-24T12:59:00Z'), zone)).toBeNull(); // 13:59 CET
    expect(calendar.excludedBy(t('2026-12-24T13:00:00Z'), zone)).toBe('holiday: Christmas Eve');
    expect(calendar.excludedBy(t('2026-12-24T22:59:00Z'), zone)).toBe('holiday: Christmas Eve');
    expect(calendar.excludedBy(t('2026-12-24T23:00:00Z'), zone)).toBe('holiday: Christmas Day');
    expect(calendar.excludedBy(t('2026-12-31T13:00:00Z'), zone)).toBe("holiday: New Year's Eve");
  });

  it('names in another language', () => {
    const calendar = publicHolidays({
      country: 'DE',
      language: 'de',
      from: '2026-12-25',
      to: '2026-12-25',
    });
    expect(calendar.excludedBy(noon('2026-12-25'), 'Europe/Berlin')).toBe(
      'holiday: 1. Weihnachtstag',
    );
  });

  it.each([
    [
      { country: 'XX', from: '2026-01-01', to: '2026-12-31' },
      'publicHolidays.country',
      /"XX" is not a country code/,
    ],
    [
      { country: 'DE', state: 'ZZ', from: '2026-01-01', to: '2026-12-31' },
      'publicHolidays.state',
      /not a state code of DE; known: BB, BE/,
    ],
    [
      { country: 'DE', state: 'BY', region: 'Q', from: '2026-01-01', to: '2026-12-31' },
      'publicHolidays.region',
      /not a region code of DE-BY/,
    ],
    [
      { country: 'DE', region: 'A', from: '2026-01-01', to: '2026-12-31' },
      'publicHolidays.region',
      /needs a state/,
    ],
    [
      { country: 'DE', types: ['holy'], from: '2026-01-01', to: '2026-12-31' },
      'publicHolidays.types[0]',
      /not a holiday type/,
    ],
    [
      { country: 'DE', from: '2026-02-30', to: '2026-12-31' },
      'publicHolidays.from',
      /is not a date; use YYYY-MM-DD/,
    ],
    [
      { country: 'DE', from: '2026-01-01', to: '2025-12-31' },
      'publicHolidays.to',
      /is before from/,
    ],
    [
      { country: 'DE', from: '2026-01-01', to: '2099-12-31' },
      'publicHolidays.to',
      /more than 50 years/,
    ],
  ])('bad options: INVALID_CALENDAR naming the field (%#)', (options, field, message) => {
    let error: unknown;
    try {
      publicHolidays(options as Parameters<typeof publicHolidays>[0]);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_CALENDAR'), String(error)).toBe(true);
    expect((error as { field?: string }).field).toBe(field);
    expect((error as Error).message).toMatch(message);
  });
});
