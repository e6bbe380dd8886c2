import { describe, expect, it } from 'vitest';
import { upcomingFires } from '../src/dst-notes.js';

const kinds = (expression: string, tz: string, after: string, count: number) =>
  upcomingFires(expression, tz, new Date(after), count).map((f) => [
    f.local,
    f.notes.map((n) => n.kind).join(','),
  ]);

describe('upcomingFires DST notes in other zones', () => {
  it('America/New_York: 02:30 moved to 03:00 EDT in March, once-only in November', () => {
    expect(kinds('30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 2)).toEqual([
      ['2026-03-08 03:00:00 -04:00', 'moved'],
      ['2026-03-09 02:30:00 -04:00', ''],
    ]);
    expect(kinds('30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', 2)).toEqual([
      ['2026-11-01 01:30:00 -04:00', 'once'],
      ['2026-11-02 01:30:00 -05:00', ''],
    ]);
  });

  it('Australia/Lord_Howe (a 30-minute shift): 02:15 does not exist on 2026-10-04', () => {
    expect(kinds('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T12:00:00Z', 2)).toEqual([
      ['2026-10-04 02:30:00 +11:00', 'moved'],
      ['2026-10-05 02:15:00 +11:00', ''],
    ]);
  });

  it('UTC and zones without DST never get a note', () => {
    for (const tz of ['UTC', 'Asia/Tokyo']) {
      const fires = upcomingFires('*/7 * * * *', tz, new Date('2026-03-29T00:00:00Z'), 200);
      expect(fires.every((f) => f.notes.length === 0)).toBe(true);
    }
  });
});
