import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { cron } from '../../src/triggers/cron.js';
import { fires, firesBetween } from './helpers.js';

const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('cron DST rule: Europe/Berlin (spring 2026-03-29 01:00Z, fall 2026-10-25 01:00Z)', () => {
  const tz = 'Europe/Berlin';

  it('`30 2 * * *` fires once at the end of the spring gap: 03:00 CEST', () => {
    const t = cron('30 2 * * *', { tz });
    expect(t.next(new Date('2026-03-28T12:00:00Z'))?.toISOString()).toBe(
      '2026-03-29T01:00:00.000Z',
    );
    expect(fires(t, '2026-03-27T12:00:00Z', 4)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
  });

  it('`30 2 * * *` fires only at the first 02:30 of the fall-back day', () => {
    const t = cron('30 2 * * *', { tz });
    expect(fires(t, '2026-10-23T12:00:00Z', 4)).toEqual([
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // first 02:30 (CEST); not again at 01:30Z (CET)
      '2026-10-26T01:30:00.000Z', // 02:30 CET
      '2026-10-27T01:30:00.000Z',
    ]);
    expect(firesBetween(t, '2026-10-25T00:00:00Z', '2026-10-25T23:00:00Z').map(iso)).toEqual([
      '2026-10-25T00:30:00.000Z',
    ]);
  });

  it('a specific-hour fire on the fall-back day, asked months ahead (across spring), is the first reading', () => {
    // From January, both ends of the search read CET; the walk must not skip the CEST segment
    // that holds the first 02:30 of 25 October (it used to jump to 2027).
    for (const from of ['2026-01-01T00:00:00Z', '2025-12-01T00:00:00Z', '2026-03-01T00:00:00Z']) {
      expect(cron('30 2 25 10 *', { tz }).next(new Date(from))?.toISOString()).toBe(
        '2026-10-25T00:30:00.000Z',
      );
    }
    expect(
      cron('15 1 1 11 *', { tz: 'America/New_York' })
        .next(new Date('2026-01-01T00:00:00Z'))
        ?.toISOString(),
    ).toBe(
      '2026-11-01T05:15:00.000Z', // first 01:15 (EDT)
    );
  });

  it('`30 2 * * *` asked from inside the repeated hour waits for the next day', () => {
    const t = cron('30 2 * * *', { tz });
    expect(t.next(new Date('2026-10-25T00:30:00Z'))?.toISOString()).toBe(
      '2026-10-26T01:30:00.000Z',
    );
    expect(t.next(new Date('2026-10-25T01:10:00Z'))?.toISOString()).toBe(
      '2026-10-26T01:30:00.000Z',
    );
  });

  it('`*/5 * * * *` fires every 5 real minutes through the repeated hour', () => {
    const list = firesBetween(
      cron('*/5 * * * *', { tz }),
      '2026-10-25T00:00:00Z',
      '2026-10-25T02:00:00Z',
    );
    expect(list).toHaveLength(24);
    expect(iso(list[0] ?? 0)).toBe('2026-10-25T00:00:00.000Z');
    expect(iso(list[23] ?? 0)).toBe('2026-10-25T01:55:00.000Z');
    for (let i = 1; i < list.length; i++)
      expect((list[i] ?? 0) - (list[i - 1] ?? 0)).toBe(5 * MINUTE);
  });

  it('`*/5 * * * *` fires every 5 real minutes across the spring gap (no 02:xx wall times exist)', () => {
    const list = firesBetween(
      cron('*/5 * * * *', { tz }),
      '2026-03-29T00:00:00Z',
      '2026-03-29T02:00:00Z',
    );
    expect(list).toHaveLength(24);
    for (let i = 1; i < list.length; i++)
      expect((list[i] ?? 0) - (list[i - 1] ?? 0)).toBe(5 * MINUTE);
  });

  it('`0 * * * *` gives 23 fires on the spring day and 25 on the fall day', () => {
    const t = cron('0 * * * *', { tz });
    // local days: 2026-03-29 00:00 CET = 03-28T23:00Z .. 03-30 00:00 CEST = 03-29T22:00Z
    expect(firesBetween(t, '2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z')).toHaveLength(23);
    // 2026-10-25 00:00 CEST = 10-24T22:00Z .. 10-26 00:00 CET = 10-25T23:00Z
    expect(firesBetween(t, '2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z')).toHaveLength(25);
  });

  it('`*/15 2 * * *` (specific hour) fires once after the gap, and four times on the fall day', () => {
    const t = cron('*/15 2 * * *', { tz });
    expect(firesBetween(t, '2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z').map(iso)).toEqual([
      '2026-03-29T01:00:00.000Z',
    ]);
    expect(firesBetween(t, '2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z').map(iso)).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T00:15:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T00:45:00.000Z',
    ]);
  });

  it('`0 2,3 * * *` fires once at 03:00 CEST on the spring day (the gap end and 03:00 coincide)', () => {
    const t = cron('0 2,3 * * *', { tz });
    expect(firesBetween(t, '2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z').map(iso)).toEqual([
      '2026-03-29T01:00:00.000Z',
    ]);
  });

  it('6-field `30 30 2 * * *` fires at the end of the gap too', () => {
    expect(
      cron('30 30 2 * * *', { tz }).next(new Date('2026-03-28T12:00:00Z'))?.toISOString(),
    ).toBe('2026-03-29T01:00:00.000Z');
  });
});

describe('cron DST rule: America/New_York (spring 2026-03-08 07:00Z, fall 2026-11-01 06:00Z)', () => {
  const tz = 'America/New_York';

  it('`30 2 * * *` fires at 03:00 EDT on the spring day', () => {
    expect(fires(cron('30 2 * * *', { tz }), '2026-03-07T00:00:00Z', 3)).toEqual([
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  it('`30 1 * * *` fires only at the first 01:30 of the fall day', () => {
    expect(fires(cron('30 1 * * *', { tz }), '2026-10-31T00:00:00Z', 3)).toEqual([
      '2026-10-31T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T05:30:00.000Z', // first 01:30 (EDT), not 06:30Z (EST)
      '2026-11-02T06:30:00.000Z', // 01:30 EST
    ]);
  });

  it('`*/10 * * * *` fires every 10 real minutes through the repeated hour', () => {
    const list = firesBetween(
      cron('*/10 * * * *', { tz }),
      '2026-11-01T05:00:00Z',
      '2026-11-01T07:00:00Z',
    );
    expect(list).toHaveLength(12);
    for (let i = 1; i < list.length; i++)
      expect((list[i] ?? 0) - (list[i - 1] ?? 0)).toBe(10 * MINUTE);
  });

  it('`0 9 * * MON-FRI` stays at 09:00 local across both changes', () => {
    const t = cron('0 9 * * MON-FRI', { tz });
    expect(fires(t, '2026-03-06T00:00:00Z', 2)).toEqual([
      '2026-03-06T14:00:00.000Z', // Fri, EST
      '2026-03-09T13:00:00.000Z', // Mon, EDT
    ]);
    expect(fires(t, '2026-10-30T00:00:00Z', 2)).toEqual([
      '2026-10-30T13:00:00.000Z', // Fri, EDT
      '2026-11-02T14:00:00.000Z', // Mon, EST
    ]);
  });
});

/**
 * Brute-force oracle: walks real time minute by minute, reads the wall clock with Intl, and
 * applies the DST rule literally. The trigger must produce exactly the same fires.
 */
function wallClock(tz: string): (t: number) => number {
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  const wallOf = (t: number) => {
    const p = Object.fromEntries(fmt.formatToParts(t).map((x) => [x.type, Number(x.value)]));
    return Date.UTC(p.year ?? 0, (p.month ?? 1) - 1, p.day, p.hour, p.minute);
  };
  return wallOf;
}

function oracle(expression: string, tz: string, from: number, to: number): number[] {
  const wallOf = wallClock(tz);
  const expr = CronExpressionParser.parse(expression, { tz: 'UTC' });
  const matches = (wall: number) => expr.includesDate(new Date(wall));
  const hourWildcard = expr.fields.hour.values.length === 24;
  const out: number[] = [];
  let maxWall = wallOf(from) - MINUTE;
  for (let t = from; t < to; t += MINUTE) {
    const wall = wallOf(t);
    if (hourWildcard) {
      if (matches(wall)) out.push(t);
    } else if (wall > maxWall) {
      let hit = matches(wall);
      for (let w = maxWall + MINUTE; !hit && w < wall; w += MINUTE) hit = matches(w); // skipped times
      if (hit) out.push(t);
    }
    maxWall = Math.max(maxWall, wall);
  }
  return out;
}

describe('cron DST rule against a brute-force oracle', () => {
  const windows: [string, string][] = [
    ['Europe/Berlin', '2026-03-28T12:00:00Z'],
    ['Europe/Berlin', '2026-10-24T12:00:00Z'],
    ['America/New_York', '2026-03-07T18:00:00Z'],
    ['America/New_York', '2026-10-31T18:00:00Z'],
    ['Australia/Lord_Howe', '2026-04-04T00:00:00Z'], // 30-minute shift
    ['Australia/Lord_Howe', '2026-10-03T00:00:00Z'],
    ['America/Santiago', '2026-04-04T12:00:00Z'], // changes at local midnight
    ['America/Santiago', '2026-09-05T12:00:00Z'],
  ];
  const expressions = [
    '*/5 * * * *',
    '30 2 * * *',
    '0 */2 * * *',
    '15,45 0 * * *',
    '45 23 * * *',
    '*/20 1-3 * * *',
    '0 0 * * *',
    '10 * * * *',
  ];
  for (const [tz, start] of windows) {
    it(`${tz} around ${start.slice(0, 10)}`, () => {
      const from = new Date(start).getTime();
      const to = from + 36 * 60 * MINUTE;
      const wallOf = wallClock(tz);
      expect(wallOf(to) - to, 'the window must contain a transition').not.toBe(wallOf(from) - from);
      for (const expression of expressions) {
        const got = firesBetween(cron(expression, { tz }), from, to).map(iso);
        const want = oracle(expression, tz, from, to).map(iso);
        expect({ expression, fires: got }).toEqual({ expression, fires: want });
      }
    });
  }
});
