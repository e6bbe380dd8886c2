import { describe, expect, it } from 'vitest';
import { exclusions } from '../../src/calendar/exclusions.js';
import { seeded } from '../seeded-random.js';

const t = (iso: string): number => Date.parse(iso);

describe('exclusions: dates', () => {
  it('excludes the whole local day in the zone asked with, with its reason', () => {
    const calendar = exclusions({
      dates: ['2026-12-24', { date: '2026-12-25', reason: 'holiday: Christmas Day' }],
    });
    expect(calendar.excludedBy(t('2026-12-25T10:00:00Z'), 'UTC')).toBe('holiday: Christmas Day');
    expect(calendar.excludedBy(t('2026-12-24T00:00:00Z'), 'UTC')).toBe('excluded date 2026-12-24');
    expect(calendar.excludedBy(t('2026-12-23T23:59:59.999Z'), 'UTC')).toBeNull();
    expect(calendar.excludedBy(t('2026-12-26T00:00:00Z'), 'UTC')).toBeNull();
    // Berlin (CET, +01:00): the 25th runs from 24th 23:00Z to 25th 23:00Z
    expect(calendar.excludedBy(t('2026-12-25T22:59:59Z'), 'Europe/Berlin')).toBe(
      'holiday: Christmas Day',
    );
    expect(calendar.excludedBy(t('2026-12-25T23:00:00Z'), 'Europe/Berlin')).toBeNull();
    expect(calendar.excludedBy(t('2026-12-23T23:00:00Z'), 'Europe/Berlin')).toBe(
      'excluded date 2026-12-24',
    );
    // New York (EST, −05:00): 2026-12-26T03:00Z is still the 25th there
    expect(calendar.excludedBy(t('2026-12-26T03:00:00Z'), 'America/New_York')).toBe(
      'holiday: Christmas Day',
    );
    expect(calendar.excludedBy(t('2026-12-26T03:00:00Z'), 'UTC')).toBeNull();
  });

  it('reads dates in its own zone when it fixes one, whatever the job zone', () => {
    const calendar = exclusions({ zone: 'Asia/Tokyo', dates: ['2026-01-01'] });
    // Tokyo is +09:00: 2025-12-31T15:00Z is 2026-01-01 00:00 there
    for (const zone of ['UTC', 'America/Los_Angeles', 'Europe/Berlin']) {
      expect(calendar.excludedBy(t('2025-12-31T15:00:00Z'), zone)).toBe('excluded date 2026-01-01');
      expect(calendar.excludedBy(t('2025-12-31T14:59:59Z'), zone)).toBeNull();
      expect(calendar.excludedBy(t('2026-01-01T15:00:00Z'), zone)).toBeNull();
    }
    expect(calendar.describe()).toBe('exclusions(1 date in Asia/Tokyo)');
  });

  it('a date with a fall-back lasts 25 real hours, one with a spring-forward 23', () => {
    const calendar = exclusions({ dates: ['2026-10-25', '2026-03-29'] });
    const zone = 'Europe/Berlin';
    // 2026-10-25: 00:00 CEST (24th 22:00Z) to 00:00 CET on the 26th (25th 23:00Z)
    expect(calendar.excludedBy(t('2026-10-24T21:59:59Z'), zone)).toBeNull();
    expect(calendar.excludedBy(t('2026-10-24T22:00:00Z'), zone)).not.toBeNull();
    expect(calendar.excludedBy(t('2026-10-25T01:30:00Z'), zone)).not.toBeNull(); // 02:30 CET, the second one
    expect(calendar.excludedBy(t('2026-10-25T22:59:59Z'), zone)).not.toBeNull();
    expect(calendar.excludedBy(t('2026-10-25T23:00:00Z'), zone)).toBeNull();
    // 2026-03-29: 00:00 CET (28th 23:00Z) to 00:00 CEST on the 30th (29th 22:00Z)
    expect(calendar.excludedBy(t('2026-03-28T22:59:59Z'), zone)).toBeNull();
    expect(calendar.excludedBy(t('2026-03-28T23:00:00Z'), zone)).not.toBeNull();
    expect(calendar.excludedBy(t('2026-03-29T21:59:59Z'), zone)).not.toBeNull();
    expect(calendar.excludedBy(t('2026-03-29T22:00:00Z'), zone)).toBeNull();
  });

  it('a midnight that does not exist starts the day at the end of the gap (Santiago)', () => {
    // America/Santiago springs forward at 00:00 on 2026-09-06 (−04:00 → −03:00): the day starts
    // at 01:00 −03:00 = 04:00Z; 03:59:59Z is still 23:59:59 on the 5th.
    const calendar = exclusions({ dates: ['2026-09-06'] });
    const zone = 'America/Santiago';
    expect(calendar.excludedBy(t('2026-09-06T03:59:59Z'), zone)).toBeNull();
    expect(calendar.excludedBy(t('2026-09-06T04:00:00Z'), zone)).toBe('excluded date 2026-09-06');
    // and falls back at 00:00 on 2026-04-05 (−03:00 → −04:00): 23:00-24:00 on the 4th comes twice
    const april = exclusions({ dates: ['2026-04-04'] });
    expect(april.excludedBy(t('2026-04-05T03:30:00Z'), zone)).toBe('excluded date 2026-04-04'); // 23:30 −04:00
    expect(april.excludedBy(t('2026-04-05T04:00:00Z'), zone)).toBeNull(); // 00:00 on the 5th
  });

  it('agrees with Intl on 3,000 random instants in six zones (half-hour, 45-minute and DST zones)', () => {
    const zones = [
      'Europe/Berlin',
      'America/New_York',
      'Asia/Kolkata',
      'Australia/Lord_Howe',
      'Pacific/Chatham',
      'America/Santiago',
    ];
    const random = seeded(29);
    const listed = new Set<string>();
    for (let i = 0; i < 120; i++) {
      const d = new Date(Date.UTC(2026, 0, 1) + Math.floor(random() * 365) * 86_400_000);
      listed.add(d.toISOString().slice(0, 10));
    }
    const calendar = exclusions({ dates: [...listed] });
    let excluded = 0;
    for (let i = 0; i < 3000; i++) {
      const zone = zones[i % zones.length] as string;
      const at = Date.UTC(2026, 0, 2) + Math.floor(random() * 360 * 86_400_000);
      const parts = new Intl.DateTimeFormat('en-CA', {
        timeZone: zone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
      }).format(at);
      const expected = listed.has(parts);
      expect(calendar.excludedBy(at, zone) !== null, `${new Date(at).toISOString()} ${zone}`).toBe(
        expected,
      );
      if (expected) excluded++;
    }
    expect(excluded).toBeGreaterThan(500); // the draw hits listed days, not only the others
  });
});

describe('exclusions: ranges', () => {
  it('a date to is inclusive, across a year end', () => {
    const calendar = exclusions({
      ranges: [{ from: '2026-12-28', to: '2027-01-02', reason: 'year-end freeze' }],
    });
    expect(calendar.excludedBy(t('2026-12-27T23:59:59Z'), 'UTC')).toBeNull();
    expect(calendar.excludedBy(t('2026-12-28T00:00:00Z'), 'UTC')).toBe('year-end freeze');
    expect(calendar.excludedBy(t('2027-01-01T12:00:00Z'), 'UTC')).toBe('year-end freeze');
    expect(calendar.excludedBy(t('2027-01-02T23:59:59Z'), 'UTC')).toBe('year-end freeze');
    expect(calendar.excludedBy(t('2027-01-03T00:00:00Z'), 'UTC')).toBeNull();
  });

  it('local date-times across midnight: from inclusive, to exclusive, in the zone asked with', () => {
    const calendar = exclusions({
      ranges: [{ from: '2026-12-31T22:00', to: '2027-01-01T02:00' }],
    });
    const reason = 'excluded 2026-12-31T22:00 to 2027-01-01T02:00';
    expect(calendar.excludedBy(t('2026-12-31T22:00:00Z'), 'UTC')).toBe(reason);
    expect(calendar.excludedBy(t('2027-01-01T01:59:59Z'), 'UTC')).toBe(reason);
    expect(calendar.excludedBy(t('2027-01-01T02:00:00Z'), 'UTC')).toBeNull();
    expect(calendar.excludedBy(t('2026-12-31T21:59:59Z'), 'UTC')).toBeNull();
    // in Berlin the same local span is one hour earlier in UTC
    expect(calendar.excludedBy(t('2026-12-31T21:00:00Z'), 'Europe/Berlin')).toBe(reason);
    expect(calendar.excludedBy(t('2027-01-01T01:00:00Z'), 'Europe/Berlin')).toBeNull();
  });

  it('instants with an offset are the same in every zone', () => {
    const calendar = exclusions({
      ranges: [{ from: '2026-06-01T10:00:00Z', to: '2026-06-01T14:00:00+02:00' }],
    });
    for (const zone of ['UTC', 'Asia/Tokyo', 'America/Denver']) {
      expect(calendar.excludedBy(t('2026-06-01T10:00:00Z'), zone)).not.toBeNull();
      expect(calendar.excludedBy(t('2026-06-01T11:59:59Z'), zone)).not.toBeNull();
      expect(calendar.excludedBy(t('2026-06-01T12:00:00Z'), zone)).toBeNull();
      expect(calendar.excludedBy(t('2026-06-01T09:59:59Z'), zone)).toBeNull();
    }
  });

  it('a boundary in a skipped hour is the end of the gap; in a repeated hour, its first occurrence', () => {
    const zone = 'Europe/Berlin';
    // 02:30 does not exist on 2026-03-29: from is 03:00 CEST = 01:00Z
    const spring = exclusions({ ranges: [{ from: '2026-03-29T02:30', to: '2026-03-29T05:00' }] });
    expect(spring.excludedBy(t('2026-03-29T00:59:59Z'), zone)).toBeNull();
    expect(spring.excludedBy(t('2026-03-29T01:00:00Z'), zone)).not.toBeNull();
    expect(spring.excludedBy(t('2026-03-29T02:59:59Z'), zone)).not.toBeNull();
    expect(spring.excludedBy(t('2026-03-29T03:00:00Z'), zone)).toBeNull();
    // 02:30 comes twice on 2026-10-25: to is the first, 02:30 CEST = 00:30Z
    const autumn = exclusions({ ranges: [{ from: '2026-10-25T00:00', to: '2026-10-25T02:30' }] });
    expect(autumn.excludedBy(t('2026-10-25T00:29:59Z'), zone)).not.toBeNull();
    expect(autumn.excludedBy(t('2026-10-25T00:30:00Z'), zone)).toBeNull();
    expect(autumn.excludedBy(t('2026-10-25T01:15:00Z'), zone)).toBeNull(); // 02:15 CET
  });
});

describe('exclusions: weekly windows', () => {
  it('weekends in the job zone (2026-12-05 is a Saturday)', () => {
    const calendar = exclusions({ weekly: [{ days: ['sat', 'sun'], from: '00:00', to: '24:00' }] });
    const zone = 'Europe/Berlin';
    expect(calendar.excludedBy(t('2026-12-04T22:59:59Z'), zone)).toBeNull(); // Fri 23:59:59
    expect(calendar.excludedBy(t('2026-12-04T23:00:00Z'), zone)).toBe(
      'weekly window sat,sun 00:00-24:00',
    );
    expect(calendar.excludedBy(t('2026-12-06T22:59:59Z'), zone)).not.toBeNull(); // Sun 23:59:59
    expect(calendar.excludedBy(t('2026-12-06T23:00:00Z'), zone)).toBeNull(); // Mon 00:00
    const numeric = exclusions({ weekly: [{ days: [6, 0], from: '00:00', to: '24:00' }] });
    expect(numeric.excludedBy(t('2026-12-05T12:00:00Z'), zone)).toBe(
      'weekly window sat,sun 00:00-24:00',
    );
    expect(numeric.excludedBy(t('2026-12-07T12:00:00Z'), zone)).toBeNull();
  });

  it('a window across midnight opens on its listed day and ends the next morning', () => {
    const calendar = exclusions({
      weekly: [{ days: ['fri'], from: '22:00', to: '06:00', reason: 'maintenance night' }],
    });
    expect(calendar.excludedBy(t('2026-12-04T21:59:59Z'), 'UTC')).toBeNull(); // Fri
    expect(calendar.excludedBy(t('2026-12-04T22:00:00Z'), 'UTC')).toBe('maintenance night');
    expect(calendar.excludedBy(t('2026-12-05T05:59:59Z'), 'UTC')).toBe('maintenance night'); // Sat
    expect(calendar.excludedBy(t('2026-12-05T06:00:00Z'), 'UTC')).toBeNull();
    expect(calendar.excludedBy(t('2026-12-05T23:00:00Z'), 'UTC')).toBeNull(); // Sat night: not listed
    expect(calendar.excludedBy(t('2026-12-04T03:00:00Z'), 'UTC')).toBeNull(); // Thu night: not listed
    // a week later, and the end of a year (2027-01-01 is a Friday)
    expect(calendar.excludedBy(t('2027-01-02T01:00:00Z'), 'UTC')).toBe('maintenance night');
  });

  it('on a fall-back night the window is one span: 01:00-02:30 ends at the first 02:30', () => {
    const calendar = exclusions({ weekly: [{ days: ['sun'], from: '01:00', to: '02:30' }] });
    const zone = 'Europe/Berlin'; // Sunday 2026-10-25
    expect(calendar.excludedBy(t('2026-10-24T22:59:59Z'), zone)).toBeNull();
    expect(calendar.excludedBy(t('2026-10-24T23:00:00Z'), zone)).not.toBeNull(); // 01:00 CEST
    expect(calendar.excludedBy(t('2026-10-25T00:29:59Z'), zone)).not.toBeNull(); // 02:29:59 CEST
    expect(calendar.excludedBy(t('2026-10-25T00:30:00Z'), zone)).toBeNull(); // 02:30 CEST
    expect(calendar.excludedBy(t('2026-10-25T01:15:00Z'), zone)).toBeNull(); // 02:15 CET
  });

  it('on a spring-forward night a window inside the gap is empty, one across it starts at its end', () => {
    const zone = 'Europe/Berlin'; // Sunday 2026-03-29, 02:00 → 03:00
    const inGap = exclusions({ weekly: [{ days: ['sun'], from: '02:00', to: '03:00' }] });
    expect(inGap.excludedBy(t('2026-03-29T00:59:59Z'), zone)).toBeNull();
    expect(inGap.excludedBy(t('2026-03-29T01:00:00Z'), zone)).toBeNull();
    // the same window on an ordinary Sunday is an hour long
    expect(inGap.excludedBy(t('2026-03-22T01:30:00Z'), zone)).not.toBeNull();
    const across = exclusions({ weekly: [{ days: ['sun'], from: '02:30', to: '04:00' }] });
    expect(across.excludedBy(t('2026-03-29T00:59:59Z'), zone)).toBeNull();
    expect(across.excludedBy(t('2026-03-29T01:00:00Z'), zone)).not.toBeNull(); // 03:00 CEST
    expect(across.excludedBy(t('2026-03-29T01:59:59Z'), zone)).not.toBeNull();
    expect(across.excludedBy(t('2026-03-29T02:00:00Z'), zone)).toBeNull(); // 04:00 CEST
  });

  it('to equal to from is a whole day; the first match gives the reason (dates, ranges, weekly)', () => {
    const calendar = exclusions({
      dates: [{ date: '2026-12-05', reason: 'date' }],
      ranges: [{ from: '2026-12-05', to: '2026-12-06', reason: 'range' }],
      weekly: [{ days: ['sat'], from: '12:00', to: '12:00', reason: 'weekly' }],
    });
    expect(calendar.excludedBy(t('2026-12-05T13:00:00Z'), 'UTC')).toBe('date');
    expect(calendar.excludedBy(t('2026-12-06T13:00:00Z'), 'UTC')).toBe('range');
    expect(calendar.excludedBy(t('2026-12-13T11:59:59Z'), 'UTC')).toBe('weekly'); // Sun before noon
    expect(calendar.excludedBy(t('2026-12-13T12:00:00Z'), 'UTC')).toBeNull();
    expect(calendar.describe()).toBe('exclusions(1 date, 1 range, 1 weekly window)');
  });
});
