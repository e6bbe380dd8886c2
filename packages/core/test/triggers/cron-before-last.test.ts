import { describe, expect, it } from 'vitest';
import { InvalidCronError, isFleetcronError } from '../../src/errors.js';
import { cron } from '../../src/triggers/cron.js';
import { fires, thrown } from './helpers.js';

const JAN1 = '2026-01-01T00:00:00Z'; // a Thursday

describe('cron L-n: n days before the last day of the month', () => {
  it('L-3 fires three days before the last day, whatever the month length', () => {
    expect(fires(cron('0 0 L-3 * *'), JAN1, 4)).toEqual([
      '2026-01-28T00:00:00.000Z', // 31 - 3
      '2026-02-25T00:00:00.000Z', // 28 - 3
      '2026-03-28T00:00:00.000Z',
      '2026-04-27T00:00:00.000Z', // 30 - 3
    ]);
    expect(fires(cron('0 0 L-3 2 *'), '2027-06-01T00:00:00Z', 2)).toEqual([
      '2028-02-26T00:00:00.000Z', // leap year: 29 - 3
      '2029-02-25T00:00:00.000Z',
    ]);
  });

  it('L-1 is the day before the last, with seconds, times and months like any day', () => {
    expect(fires(cron('15 30 18 L-1 * *'), JAN1, 2)).toEqual([
      '2026-01-30T18:30:15.000Z',
      '2026-02-27T18:30:15.000Z',
    ]);
    expect(fires(cron('0 */12 l-1 JAN,APR *'), JAN1, 3)).toEqual([
      '2026-01-30T00:00:00.000Z',
      '2026-01-30T12:00:00.000Z',
      '2026-04-29T00:00:00.000Z',
    ]);
  });

  it('skips months too short for n (L-30 only in 31-day months)', () => {
    expect(fires(cron('0 0 L-30 * *'), JAN1, 3)).toEqual([
      '2026-03-01T00:00:00.000Z',
      '2026-05-01T00:00:00.000Z',
      '2026-07-01T00:00:00.000Z',
    ]);
  });

  it('with a restricted day-of-week, a day matches if either field matches (cron OR rule)', () => {
    // 28 Jan (L-3) OR any Monday
    expect(fires(cron('0 0 L-3 * MON'), '2026-01-20T00:00:00Z', 3)).toEqual([
      '2026-01-26T00:00:00.000Z', // Monday
      '2026-01-28T00:00:00.000Z', // L-3
      '2026-02-02T00:00:00.000Z', // Monday
    ]);
  });

  it('applies the DST rule in a time zone (Europe/Berlin, 2026)', () => {
    // 29 March = L-2 is spring-forward day: 02:30 does not exist, fires at 03:00 CEST
    expect(fires(cron('30 2 L-2 3 *', { tz: 'Europe/Berlin' }), JAN1, 1)).toEqual([
      '2026-03-29T01:00:00.000Z',
    ]);
    // 25 October = L-6 is fall-back day: a specific hour fires at the first 02:30 only
    expect(fires(cron('30 2 L-6 10 *', { tz: 'Europe/Berlin' }), JAN1, 2)).toEqual([
      '2026-10-25T00:30:00.000Z',
      '2027-10-25T00:30:00.000Z', // 2027 changes on the 31st: still CEST
    ]);
    // ... and every hour fires at both 02:30 readings
    const hourly = fires(cron('30 * L-6 10 *', { tz: 'Europe/Berlin' }), JAN1, 4);
    expect(hourly).toEqual([
      '2026-10-24T22:30:00.000Z', // 00:30 CEST
      '2026-10-24T23:30:00.000Z', // 01:30 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T01:30:00.000Z', // 02:30 CET
    ]);
    // in a zone east of UTC the wall-clock day decides, not the UTC day
    expect(fires(cron('0 1 L-3 * *', { tz: 'Asia/Tokyo' }), JAN1, 1)).toEqual([
      '2026-01-27T16:00:00.000Z', // 28 Jan 01:00 JST
    ]);
  });

  it.each([
    ['0 0 L-0 * *', 'n of L-n must be 1 to 30', 'for the last day itself write L'],
    ['0 0 L-31 * *', 'n of L-n must be 1 to 30', 'L-31 in day-of-month'],
    ['0 0 L-3,15 * *', 'L-n is supported only alone in the field', 'L-3,15'],
    ['0 0 1-L-3 * *', 'L-n is supported only alone in the field', '1-L-3'],
    ['0 0 L-3/2 * *', 'L-n is supported only alone in the field', 'L-3/2'],
    [
      '0 0 L-3W * *',
      'L-nW (the weekday nearest to n days before the last day) is not supported',
      'use L-n or LW',
    ],
    ['0 0 LW,15 * *', 'LW is supported only alone in the field', 'LW,15'],
    ['0 0 1-L * *', '1-L in day-of-month: L is supported as L (last day)', 'ranges and steps'],
    ['0 0 * * 5L-2', 'L-n is supported only in the day-of-month field', 'write nL'],
  ])('refuses %j saying what is unsupported', (expression, what, more) => {
    const error = thrown(() => cron(expression));
    expect(error).toBeInstanceOf(InvalidCronError);
    expect(isFleetcronError(error, 'INVALID_CRON')).toBe(true);
    expect((error as InvalidCronError).field).toBe('expression');
    const message = (error as Error).message;
    expect(message).toContain(what);
    expect(message).toContain(more);
    expect(message).not.toContain('NaN');
  });

  it('refuses L-n in a month that never has enough days (never fires)', () => {
    const error = thrown(() => cron('0 0 L-29 2 *'));
    expect(isFleetcronError(error, 'INVALID_CRON')).toBe(true);
    expect((error as Error).message).toContain('never fires');
  });
});
