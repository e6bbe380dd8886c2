import { readFileSync } from 'node:fs';
import { type CalendarSpec, calendarFromSpec, isFleetcronError } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { icsCalendar } from '../src/index.js';

const t = (iso: string): number => Date.parse(iso);
const ICS = readFileSync(new URL('./fixtures/company.ics', import.meta.url), 'utf8');

describe('icsCalendar (ical.js)', () => {
  const calendar = icsCalendar(ICS, { from: '2026-01-01', to: '2027-12-31' });

  it('an all-day event spans its dates, DTEND exclusive, in the job zone', () => {
    for (const zone of ['UTC', 'Europe/Berlin']) {
      expect(calendar.excludedBy(t('2026-12-24T12:00:00Z'), zone)).toBe('event: Company holidays');
      expect(calendar.excludedBy(t('2026-12-26T12:00:00Z'), zone)).toBe('event: Company holidays');
      expect(calendar.excludedBy(t('2026-12-27T12:00:00Z'), zone)).toBeNull();
    }
    expect(calendar.excludedBy(t('2026-12-23T23:30:00Z'), 'Europe/Berlin')).toBe(
      'event: Company holidays',
    );
    expect(calendar.excludedBy(t('2026-12-23T23:30:00Z'), 'UTC')).toBeNull();
  });

  it('a yearly all-day RRULE is expanded within the horizon only', () => {
    expect(calendar.excludedBy(t('2026-06-15T12:00:00Z'), 'UTC')).toBe("event: Founders' Day");
    expect(calendar.excludedBy(t('2027-06-15T12:00:00Z'), 'UTC')).toBe("event: Founders' Day");
    expect(calendar.excludedBy(t('2025-06-15T12:00:00Z'), 'UTC')).toBeNull();
    expect(calendar.excludedBy(t('2028-06-15T12:00:00Z'), 'UTC')).toBeNull();
    expect(calendar.excludedBy(t('2026-06-16T12:00:00Z'), 'UTC')).toBeNull();
  });

  it('a weekly RRULE with a TZID: COUNT, EXDATE and a moved occurrence, whatever the job zone', () => {
    for (const zone of ['UTC', 'America/New_York']) {
      // Monday 2026-10-05 22:00-02:00 CEST = 20:00Z-00:00Z
      expect(calendar.excludedBy(t('2026-10-05T19:59:59Z'), zone)).toBeNull();
      expect(calendar.excludedBy(t('2026-10-05T20:00:00Z'), zone)).toBe(
        'event: Database maintenance',
      );
      expect(calendar.excludedBy(t('2026-10-05T23:59:59Z'), zone)).not.toBeNull();
      expect(calendar.excludedBy(t('2026-10-06T00:00:00Z'), zone)).toBeNull();
      expect(calendar.excludedBy(t('2026-10-12T21:00:00Z'), zone)).not.toBeNull();
      // 2026-10-19 is an EXDATE
      expect(calendar.excludedBy(t('2026-10-19T21:00:00Z'), zone)).toBeNull();
      // 2026-10-26 moved to 23:00-03:00, now CET (+01:00): 22:00Z-02:00Z
      expect(calendar.excludedBy(t('2026-10-26T21:30:00Z'), zone)).toBeNull();
      expect(calendar.excludedBy(t('2026-10-26T22:00:00Z'), zone)).toBe(
        'event: Database maintenance (moved)',
      );
      expect(calendar.excludedBy(t('2026-10-27T01:59:59Z'), zone)).not.toBeNull();
      // CET from November: 22:00 CET = 21:00Z; COUNT=6 ends with 2026-11-09
      expect(calendar.excludedBy(t('2026-11-09T21:00:00Z'), zone)).not.toBeNull();
      expect(calendar.excludedBy(t('2026-11-09T20:59:59Z'), zone)).toBeNull();
      expect(calendar.excludedBy(t('2026-11-16T21:30:00Z'), zone)).toBeNull();
    }
  });

  it('UTC times are instants; floating times are read in the job zone; cancelled events are left out', () => {
    expect(calendar.excludedBy(t('2026-11-10T09:00:00Z'), 'Asia/Tokyo')).toBe(
      'event: Deploy freeze',
    );
    expect(calendar.excludedBy(t('2026-11-10T16:59:59Z'), 'Asia/Tokyo')).toBe(
      'event: Deploy freeze',
    );
    expect(calendar.excludedBy(t('2026-11-10T17:00:00Z'), 'Asia/Tokyo')).toBeNull();
    expect(calendar.excludedBy(t('2026-11-11T12:00:00Z'), 'UTC')).toBeNull();
    // Team lunch 12:00 + PT1H30M, floating
    expect(calendar.excludedBy(t('2026-12-01T11:00:00Z'), 'Europe/Berlin')).toBe(
      'event: Team lunch',
    );
    expect(calendar.excludedBy(t('2026-12-01T11:00:00Z'), 'UTC')).toBeNull();
    expect(calendar.excludedBy(t('2026-12-01T13:29:59Z'), 'UTC')).toBe('event: Team lunch');
    expect(calendar.excludedBy(t('2026-12-01T13:30:00Z'), 'UTC')).toBeNull();
  });

  it('its spec rebuilds with core alone, giving the same answers', () => {
    const spec = JSON.parse(JSON.stringify(calendar.spec)) as CalendarSpec;
    const rebuilt = calendarFromSpec(spec);
    let excluded = 0;
    // every half hour from June 2026 (every event of the fixture has an occurrence after it)
    for (let at = t('2026-06-01T00:00:00Z'); at < t('2027-01-01T00:00:00Z'); at += 1_800_000) {
      for (const zone of ['UTC', 'Europe/Berlin']) {
        const answer = calendar.excludedBy(at, zone);
        expect(rebuilt.excludedBy(at, zone)).toBe(answer);
        if (answer !== null) excluded++;
      }
    }
    expect(excluded).toBeGreaterThan(100);
    expect(calendar.describe()).toMatch(/^icsCalendar\(2026-01-01\.\.2027-12-31: \d+ entries\)$/);
  });

  it('a non-IANA TZID is converted with the VTIMEZONE of the file', () => {
    const text = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//fleetcron//test//EN',
      'BEGIN:VTIMEZONE',
      'TZID:W. Europe Standard Time',
      'BEGIN:STANDARD',
      'DTSTART:16010101T030000',
      'TZOFFSETFROM:+0200',
      'TZOFFSETTO:+0100',
      'RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10',
      'END:STANDARD',
      'BEGIN:DAYLIGHT',
      'DTSTART:16010101T020000',
      'TZOFFSETFROM:+0100',
      'TZOFFSETTO:+0200',
      'RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3',
      'END:DAYLIGHT',
      'END:VTIMEZONE',
      'BEGIN:VEVENT',
      'UID:outlook@fleetcron.test',
      'DTSTAMP:20260101T000000Z',
      'SUMMARY:Audit',
      'DTSTART;TZID=W. Europe Standard Time:20260701T100000',
      'DTEND;TZID=W. Europe Standard Time:20260701T120000',
      'END:VEVENT',
      'END:VCALENDAR',
    ].join('\r\n');
    const outlook = icsCalendar(text, { from: '2026-01-01', to: '2026-12-31', label: 'audit' });
    expect(outlook.excludedBy(t('2026-07-01T07:59:59Z'), 'UTC')).toBeNull();
    expect(outlook.excludedBy(t('2026-07-01T08:00:00Z'), 'UTC')).toBe('audit: Audit');
    expect(outlook.excludedBy(t('2026-07-01T09:59:59Z'), 'UTC')).toBe('audit: Audit');
    expect(outlook.excludedBy(t('2026-07-01T10:00:00Z'), 'UTC')).toBeNull();
  });

  it.each([
    [
      'not iCalendar',
      'hello',
      { from: '2026-01-01', to: '2026-12-31' },
      'icsCalendar',
      /not iCalendar text/,
    ],
    [
      'a bad horizon',
      ICS,
      { from: '2026-01-01', to: '2026-13-01' },
      'icsCalendar.to',
      /not a date/,
    ],
    [
      'an unknown TZID without VTIMEZONE',
      'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART;TZID=Mars Standard Time:20260701T100000\r\nDTEND;TZID=Mars Standard Time:20260701T110000\r\nEND:VEVENT\r\nEND:VCALENDAR',
      { from: '2026-01-01', to: '2026-12-31' },
      'icsCalendar.events["x"]',
      /TZID "Mars Standard Time"/,
    ],
  ])('%s: INVALID_CALENDAR naming the field', (_name, text, options, field, message) => {
    let error: unknown;
    try {
      icsCalendar(text, options);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_CALENDAR'), String(error)).toBe(true);
    expect((error as { field?: string }).field).toBe(field);
    expect((error as Error).message).toMatch(message);
  });
});
