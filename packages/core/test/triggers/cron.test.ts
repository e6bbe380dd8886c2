import { describe, expect, it } from 'vitest';
import { InvalidCronError, isFleetcronError, UnknownTimezoneError } from '../../src/errors.js';
import { cron } from '../../src/triggers/cron.js';
import { fires, thrown } from './helpers.js';

const JAN1 = '2026-01-01T00:00:00Z'; // a Thursday

describe('cron(expression, { tz })', () => {
  it('fires on a 5-field expression, strictly after the given time', () => {
    const t = cron('*/15 * * * *');
    expect(fires(t, JAN1, 3)).toEqual([
      '2026-01-01T00:15:00.000Z',
      '2026-01-01T00:30:00.000Z',
      '2026-01-01T00:45:00.000Z',
    ]);
    expect(t.next(new Date('2026-01-01T00:14:59.999Z'))?.toISOString()).toBe(
      '2026-01-01T00:15:00.000Z',
    );
    expect(t.next(new Date('2026-01-01T00:15:00.001Z'))?.toISOString()).toBe(
      '2026-01-01T00:30:00.000Z',
    );
  });

  it('reads 6 fields with seconds first', () => {
    expect(fires(cron('*/20 * * * * *'), JAN1, 3)).toEqual([
      '2026-01-01T00:00:20.000Z',
      '2026-01-01T00:00:40.000Z',
      '2026-01-01T00:01:00.000Z',
    ]);
    expect(fires(cron('30 5 * * * *'), JAN1, 2)).toEqual([
      '2026-01-01T00:05:30.000Z',
      '2026-01-01T01:05:30.000Z',
    ]);
  });

  it.each([
    ['@yearly', ['2027-01-01T00:00:00.000Z', '2028-01-01T00:00:00.000Z']],
    ['@annually', ['2027-01-01T00:00:00.000Z', '2028-01-01T00:00:00.000Z']],
    ['@monthly', ['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']],
    ['@weekly', ['2026-01-04T00:00:00.000Z', '2026-01-11T00:00:00.000Z']],
    ['@daily', ['2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z']],
    ['@midnight', ['2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z']],
    ['@hourly', ['2026-01-01T01:00:00.000Z', '2026-01-01T02:00:00.000Z']],
    ['@HOURLY', ['2026-01-01T01:00:00.000Z', '2026-01-01T02:00:00.000Z']],
  ])('understands the nickname %s', (expression, expected) => {
    expect(fires(cron(expression), JAN1, 2)).toEqual(expected);
  });

  it('refuses @reboot clearly', () => {
    const error = thrown(() => cron('@reboot'));
    expect(error).toBeInstanceOf(InvalidCronError);
    expect((error as Error).message).toContain('@reboot is not supported');
  });

  it('understands month and weekday names', () => {
    expect(fires(cron('0 9 * * MON-FRI'), JAN1, 3)).toEqual([
      '2026-01-01T09:00:00.000Z', // Thu
      '2026-01-02T09:00:00.000Z', // Fri
      '2026-01-05T09:00:00.000Z', // Mon
    ]);
    expect(fires(cron('0 0 1 JAN,jul *'), JAN1, 2)).toEqual([
      '2026-07-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 * * sun'), JAN1, 1)).toEqual(['2026-01-04T00:00:00.000Z']);
    expect(fires(cron('0 0 * * 7'), JAN1, 1)).toEqual(['2026-01-04T00:00:00.000Z']); // 7 = Sunday
  });

  it('understands ? in either day field', () => {
    expect(fires(cron('0 0 ? * MON'), JAN1, 2)).toEqual([
      '2026-01-05T00:00:00.000Z',
      '2026-01-12T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 10 * ?'), JAN1, 2)).toEqual([
      '2026-01-10T00:00:00.000Z',
      '2026-02-10T00:00:00.000Z',
    ]);
  });

  it.each([
    ['? 0 0 * * *', 'second'],
    ['0 ? 0 * * *', 'minute'],
    ['? 0 * * *', 'minute'],
    ['0 ? * * *', 'hour'],
    ['0 0 1 ? *', 'month'],
    ['0 0 0 1 1,? *', 'month'],
  ])('refuses ? outside the day fields: %j names the %s field', (expression, field) => {
    const error = thrown(() => cron(expression));
    expect(error).toBeInstanceOf(InvalidCronError);
    expect((error as InvalidCronError).field).toBe('expression');
    expect((error as Error).message).toContain(
      `? is only allowed in the day-of-month and day-of-week fields, found in the ${field} field`,
    );
  });

  it('understands L (last day of month, last weekday of month)', () => {
    expect(fires(cron('0 0 L * *'), JAN1, 3)).toEqual([
      '2026-01-31T00:00:00.000Z',
      '2026-02-28T00:00:00.000Z',
      '2026-03-31T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 L 2 *'), '2027-06-01T00:00:00Z', 2)).toEqual([
      '2028-02-29T00:00:00.000Z', // leap year
      '2029-02-28T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 * * 5L'), JAN1, 2)).toEqual([
      '2026-01-30T00:00:00.000Z', // last Friday of January
      '2026-02-27T00:00:00.000Z',
    ]);
  });

  it('understands # (n-th weekday of month)', () => {
    expect(fires(cron('0 0 * * 1#2'), JAN1, 3)).toEqual([
      '2026-01-12T00:00:00.000Z',
      '2026-02-09T00:00:00.000Z',
      '2026-03-09T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 * * FRI#5'), JAN1, 2)).toEqual([
      '2026-01-30T00:00:00.000Z',
      '2026-05-29T00:00:00.000Z',
    ]);
  });

  it('understands nW (nearest weekday, never leaving the month)', () => {
    expect(fires(cron('0 0 15W * *'), JAN1, 4)).toEqual([
      '2026-01-15T00:00:00.000Z', // Thu
      '2026-02-16T00:00:00.000Z', // 15th is a Sunday -> Monday 16th
      '2026-03-16T00:00:00.000Z', // Sunday -> Monday
      '2026-04-15T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 1W * *'), '2026-07-31T00:00:00Z', 2)).toEqual([
      '2026-08-03T00:00:00.000Z', // Aug 1st is a Saturday -> Monday 3rd, not Friday Jul 31st
      '2026-09-01T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 30W * *'), '2026-11-01T00:00:00Z', 1)).toEqual([
      '2026-11-30T00:00:00.000Z', // Monday
    ]);
    expect(fires(cron('0 0 31W * *'), '2026-05-01T00:00:00Z', 2)).toEqual([
      '2026-05-29T00:00:00.000Z', // May 31st is a Sunday, the last day -> Friday 29th
      '2026-07-31T00:00:00.000Z', // June has no 31st: no fire
    ]);
    expect(fires(cron('0 12 6W 6 *'), JAN1, 2)).toEqual([
      '2026-06-05T12:00:00.000Z', // Saturday -> Friday
      '2027-06-07T12:00:00.000Z', // Sunday -> Monday
    ]);
  });

  it('understands LW (last weekday of the month)', () => {
    expect(fires(cron('0 18 LW * *'), JAN1, 3)).toEqual([
      '2026-01-30T18:00:00.000Z', // 31st is a Saturday
      '2026-02-27T18:00:00.000Z', // 28th is a Saturday
      '2026-03-31T18:00:00.000Z',
    ]);
  });

  it('matches a day when either restricted day field matches (Vixie OR)', () => {
    // 13th of the month OR any Friday
    expect(fires(cron('0 0 13 * 5'), JAN1, 5)).toEqual([
      '2026-01-02T00:00:00.000Z', // Fri
      '2026-01-09T00:00:00.000Z', // Fri
      '2026-01-13T00:00:00.000Z', // 13th (Tue)
      '2026-01-16T00:00:00.000Z', // Fri
      '2026-01-23T00:00:00.000Z',
    ]);
    // with W: the nearest weekday to the 15th OR any Monday
    expect(fires(cron('0 0 15W * MON'), JAN1, 4)).toEqual([
      '2026-01-05T00:00:00.000Z',
      '2026-01-12T00:00:00.000Z',
      '2026-01-15T00:00:00.000Z',
      '2026-01-19T00:00:00.000Z',
    ]);
    // a step counts as restricted (as the Vixie man page says; its code treats `*/2` as `*`):
    // odd days OR Mondays
    expect(fires(cron('0 0 */2 * MON'), JAN1, 4)).toEqual([
      '2026-01-03T00:00:00.000Z',
      '2026-01-05T00:00:00.000Z', // odd and Monday
      '2026-01-07T00:00:00.000Z',
      '2026-01-09T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 2-31/2 * MON'), '2026-01-09T00:00:00Z', 2)).toEqual([
      '2026-01-10T00:00:00.000Z',
      '2026-01-12T00:00:00.000Z', // even day and Monday
    ]);
    // one field unrestricted: the other alone decides (AND with "any")
    expect(fires(cron('0 0 13 * *'), JAN1, 1)).toEqual(['2026-01-13T00:00:00.000Z']);
    expect(fires(cron('0 0 * * 5'), JAN1, 1)).toEqual(['2026-01-02T00:00:00.000Z']);
  });

  it('defaults to UTC whatever the process time zone is', () => {
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'Asia/Tokyo';
      const inTokyo = cron('0 9 * * *').next(new Date(JAN1));
      process.env.TZ = 'America/Los_Angeles';
      const inLa = cron('0 9 * * *').next(new Date(JAN1));
      expect(inTokyo?.toISOString()).toBe('2026-01-01T09:00:00.000Z');
      expect(inLa?.toISOString()).toBe('2026-01-01T09:00:00.000Z');
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('reads wall-clock times in the given zone', () => {
    expect(fires(cron('0 9 * * *', { tz: 'Asia/Tokyo' }), JAN1, 1)).toEqual([
      '2026-01-02T00:00:00.000Z', // 09:00 JST on Jan 1st is 00:00Z, not strictly after
    ]);
    expect(fires(cron('0 9 * * *', { tz: 'America/New_York' }), JAN1, 1)).toEqual([
      '2026-01-01T14:00:00.000Z',
    ]);
    expect(fires(cron('0 9 * * *', { tz: 'Asia/Kolkata' }), JAN1, 1)).toEqual([
      '2026-01-01T03:30:00.000Z',
    ]);
    // asked in summer (CEST), the next fire is in winter (CET): the walk crosses the transition
    expect(fires(cron('0 0 1 1 *', { tz: 'Europe/Berlin' }), '2026-07-01T00:00:00Z', 1)).toEqual([
      '2026-12-31T23:00:00.000Z',
    ]);
    expect(fires(cron('0 12 1 7 *', { tz: 'Europe/Berlin' }), JAN1, 1)).toEqual([
      '2026-07-01T10:00:00.000Z',
    ]);
    expect(fires(cron('0 0 1 1 *', { tz: 'Europe/Berlin' }), JAN1, 2)).toEqual([
      '2026-12-31T23:00:00.000Z',
      '2027-12-31T23:00:00.000Z',
    ]);
  });

  it.each([
    [''],
    ['   '],
    ['bogus'],
    ['* * *'],
    ['* * * *'],
    ['* * * * * * *'],
    ['61 * * * *'],
    ['* 24 * * *'],
    ['* * 32 * *'],
    ['* * * 13 *'],
    ['* * * * 8'],
    ['0 0 30 2 *'],
    ['0 0 15W,16 * *'],
    ['0 0 32W * *'],
    ['0 0 * * FOO'],
    ['@every 5m'],
    ['@minutely'],
  ])('rejects %j with InvalidCronError(expression)', (expression) => {
    const error = thrown(() => cron(expression));
    expect(error).toBeInstanceOf(InvalidCronError);
    expect(isFleetcronError(error, 'INVALID_CRON')).toBe(true);
    expect((error as InvalidCronError).field).toBe('expression');
    expect((error as Error).message).toContain(JSON.stringify(expression));
  });

  it('rejects an expression that never fires', () => {
    const error = thrown(() => cron('0 0 31W 2 *'));
    expect(isFleetcronError(error, 'INVALID_CRON')).toBe(true);
    expect((error as Error).message).toContain('never fires');
  });

  it('rejects a non-string expression', () => {
    expect(
      isFleetcronError(
        thrown(() => cron(42 as unknown as string)),
        'INVALID_CRON',
      ),
    ).toBe(true);
  });

  // Offset zones: Node 22+ Intl accepts them, Node 20 does not; refused on every Node line.
  it.each([['Mars/Olympus'], [''], ['+01:00'], ['-0530'], ['+01'], ['Europe/Berlinn']])(
    'rejects the unknown zone %j with UnknownTimezoneError(tz)',
    (tz) => {
      const error = thrown(() => cron('* * * * *', { tz }));
      expect(error).toBeInstanceOf(UnknownTimezoneError);
      expect(isFleetcronError(error, 'UNKNOWN_TIMEZONE')).toBe(true);
      expect((error as UnknownTimezoneError).field).toBe('tz');
    },
  );

  it('is pure: same input, same answer, whatever was asked before', () => {
    const a = cron('7 */3 * * *', { tz: 'Europe/Berlin' });
    const b = cron('7 */3 * * *', { tz: 'Europe/Berlin' });
    const at = new Date('2026-05-05T05:05:05Z');
    const first = a.next(at)?.toISOString();
    b.next(new Date('2031-01-01T00:00:00Z'));
    a.next(new Date('1999-01-01T00:00:00Z'));
    expect(a.next(at)?.toISOString()).toBe(first);
    expect(b.next(at)?.toISOString()).toBe(first);
    expect(first).toBe('2026-05-05T07:07:00.000Z'); // 09:07 CEST
  });

  it('never mutates its argument', () => {
    const t = cron('* * * * *');
    const after = new Date(JAN1);
    t.next(after);
    expect(after.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('describes itself and exposes expression and zone', () => {
    const t = cron('*/5 * * * *');
    expect(t.describe()).toBe('cron(*/5 * * * * UTC)');
    expect(t.expression).toBe('*/5 * * * *');
    expect(t.tz).toBe('UTC');
    expect(cron('@daily', { tz: 'Europe/Berlin' }).describe()).toBe('cron(@daily Europe/Berlin)');
  });

  it('makes H (hashed) values the same on every instance', () => {
    const one = cron('H H * * *').next(new Date(JAN1))?.toISOString();
    const two = cron('H H * * *').next(new Date(JAN1))?.toISOString();
    expect(one).toBe(two);
  });

  it('builds and schedules 10,000 jobs quickly (parse once, reuse)', () => {
    const start = performance.now();
    const triggers = Array.from({ length: 10_000 }, (_, i) =>
      i % 2 === 0 ? cron(`${i % 60} ${i % 24} * * *`) : cron('*/5 * * * *'),
    );
    const after = new Date(JAN1);
    let count = 0;
    for (const t of triggers) if (t.next(after)) count++;
    const elapsed = performance.now() - start;
    expect(count).toBe(10_000);
    expect(elapsed).toBeLessThan(20_000); // about 1 s on a busy 2-core box; a generous bound
  });

  it('schedules 2,000 zoned jobs quickly, including across a DST change', () => {
    const start = performance.now();
    const after = new Date('2026-10-24T12:00:00Z');
    let count = 0;
    for (let i = 0; i < 2000; i++) {
      const t = cron(`${i % 60} ${i % 24} * * *`, {
        tz: i % 2 ? 'Europe/Berlin' : 'America/New_York',
      });
      if (t.next(after) && t.next(new Date('2026-07-01T00:00:00Z'))) count++;
    }
    expect(count).toBe(2000);
    expect(performance.now() - start).toBeLessThan(20_000);
  });
});
