import { describe, expect, it } from 'vitest';
import { definitionHash, nextFires, registeredJob, triggerFromSpec } from '../../src/backend.js';
import {
  AmbiguousCronDialectError,
  cron,
  FakeClock,
  InvalidCronError,
  isFleetcronError,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { fires, firesBetween, thrown } from './helpers.js';

const JAN1 = '2026-01-01T00:00:00Z'; // a Thursday
const SUN4 = '2026-01-04T00:00:00Z'; // a Sunday
const quartz = (expression: string, tz?: string) =>
  cron(expression, tz === undefined ? { dialect: 'quartz' } : { dialect: 'quartz', tz });
const weekdaysOf = (isoTimes: string[]) =>
  isoTimes.map((t) => ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'][new Date(t).getUTCDay()]);

describe("cron(expr, { dialect: 'quartz' })", () => {
  it('0 15 10 ? * 6L is the last Friday of the month (Quartz docs); Unix reads the last Saturday', () => {
    expect(fires(quartz('0 15 10 ? * 6L'), JAN1, 3)).toEqual([
      '2026-01-30T10:15:00.000Z',
      '2026-02-27T10:15:00.000Z',
      '2026-03-27T10:15:00.000Z',
    ]);
    expect(fires(cron('0 15 10 ? * 6L', { dialect: 'unix' }), JAN1, 3)).toEqual([
      '2026-01-31T10:15:00.000Z',
      '2026-02-28T10:15:00.000Z',
      '2026-03-28T10:15:00.000Z',
    ]);
  });

  it('0 0 12 ? * 2-6 is Monday to Friday (Quartz docs); Unix reads Tuesday to Saturday', () => {
    const week = fires(quartz('0 0 12 ? * 2-6'), SUN4, 6);
    expect(week.slice(0, 5)).toEqual([
      '2026-01-05T12:00:00.000Z',
      '2026-01-06T12:00:00.000Z',
      '2026-01-07T12:00:00.000Z',
      '2026-01-08T12:00:00.000Z',
      '2026-01-09T12:00:00.000Z',
    ]);
    expect(weekdaysOf(week)).toEqual(['MON', 'TUE', 'WED', 'THU', 'FRI', 'MON']);
    expect(weekdaysOf(fires(cron('0 0 12 ? * 2-6', { dialect: 'unix' }), SUN4, 5))).toEqual([
      'TUE',
      'WED',
      'THU',
      'FRI',
      'SAT',
    ]);
  });

  it('numbers 1-7 = SUN-SAT in single days, lists, steps, #, L and wrapping ranges', () => {
    expect(weekdaysOf(fires(quartz('0 0 0 ? * 1'), JAN1, 1))).toEqual(['SUN']);
    expect(weekdaysOf(fires(quartz('0 0 0 ? * 7'), JAN1, 1))).toEqual(['SAT']);
    expect(weekdaysOf(fires(quartz('0 0 0 ? * 1,4'), SUN4, 4))).toEqual([
      'WED',
      'SUN',
      'WED',
      'SUN',
    ]);
    // Quartz `a/s` runs to SAT: 2/2 = MON, WED, FRI (never a Sunday)
    expect(weekdaysOf(fires(quartz('0 0 0 ? * 2/2'), SUN4, 4))).toEqual([
      'MON',
      'WED',
      'FRI',
      'MON',
    ]);
    expect(weekdaysOf(fires(quartz('0 0 0 ? * */2'), '2026-01-03T12:00:00Z', 4))).toEqual([
      'SUN',
      'TUE',
      'THU',
      'SAT',
    ]);
    expect(weekdaysOf(fires(quartz('0 0 0 ? * 6-2'), JAN1, 4))).toEqual([
      'FRI',
      'SAT',
      'SUN',
      'MON',
    ]);
    // L alone is the last day of the week, Saturday
    expect(weekdaysOf(fires(quartz('0 0 0 ? * L'), JAN1, 2))).toEqual(['SAT', 'SAT']);
    // 6#3: the third Friday
    expect(fires(quartz('0 0 0 ? * 6#3'), JAN1, 3)).toEqual([
      '2026-01-16T00:00:00.000Z',
      '2026-02-20T00:00:00.000Z',
      '2026-03-20T00:00:00.000Z',
    ]);
    expect(fires(quartz('0 0 0 ? * 2#1'), JAN1, 2)).toEqual([
      '2026-01-05T00:00:00.000Z',
      '2026-02-02T00:00:00.000Z',
    ]);
  });

  it('names mean the same in both dialects, and day-of-month L, W, L-n are unchanged', () => {
    for (const expression of ['0 0 9 ? * MON-FRI', '0 0 0 ? * FRI#5', '0 0 0 ? * FRIL']) {
      expect(fires(quartz(expression), JAN1, 4)).toEqual(fires(cron(expression), JAN1, 4));
    }
    expect(weekdaysOf(fires(quartz('0 0 9 ? * MON-FRI'), SUN4, 5))).toEqual([
      'MON',
      'TUE',
      'WED',
      'THU',
      'FRI',
    ]);
    for (const expression of ['0 0 0 L * ?', '0 0 0 LW * ?', '0 0 0 15W * ?', '0 0 0 L-3 * ?']) {
      expect(fires(quartz(expression), JAN1, 4)).toEqual(fires(cron(expression), JAN1, 4));
    }
    expect(fires(quartz('0 0 0 LW * ?'), JAN1, 2)).toEqual([
      '2026-01-30T00:00:00.000Z',
      '2026-02-27T00:00:00.000Z',
    ]);
  });

  it('takes the optional year field: a year, a range, a step, a list and *', () => {
    expect(fires(quartz('0 0 12 1 1 ? 2027'), JAN1, 3)).toEqual(['2027-01-01T12:00:00.000Z']);
    expect(fires(quartz('0 0 12 1 1 ? 2027-2029'), JAN1, 5)).toEqual([
      '2027-01-01T12:00:00.000Z',
      '2028-01-01T12:00:00.000Z',
      '2029-01-01T12:00:00.000Z',
    ]);
    expect(fires(quartz('0 0 12 1 1 ? 2026/3'), '2025-06-01T00:00:00Z', 3)).toEqual([
      '2026-01-01T12:00:00.000Z',
      '2029-01-01T12:00:00.000Z',
      '2032-01-01T12:00:00.000Z',
    ]);
    expect(fires(quartz('0 0 12 1 1 ? 2030,2027'), JAN1, 3)).toEqual([
      '2027-01-01T12:00:00.000Z',
      '2030-01-01T12:00:00.000Z',
    ]);
    expect(fires(quartz('0 15 10 ? * 6L *'), JAN1, 3)).toEqual(
      fires(quartz('0 15 10 ? * 6L'), JAN1, 3),
    );
    // the last Friday of the month in 2027 only
    expect(fires(quartz('0 15 10 ? * 6L 2027'), JAN1, 13).at(-1)).toBe('2027-12-31T10:15:00.000Z');
    expect(fires(quartz('0 15 10 ? * 6L 2027'), JAN1, 13)).toHaveLength(12);
    // the README's example: the third Friday, in 2027 only
    const third2027 = fires(quartz('0 0 12 ? * 6#3 2027'), JAN1, 13);
    expect(third2027).toHaveLength(12);
    expect([third2027[0], third2027.at(-1)]).toEqual([
      '2027-01-15T12:00:00.000Z',
      '2027-12-17T12:00:00.000Z',
    ]);
  });

  it('a trigger whose years are all past has no next fire (null), and is still valid', () => {
    const past = quartz('0 0 12 ? * MON 2020-2024');
    expect(past.next(new Date(JAN1))).toBeNull();
    expect(quartz('0 0 12 ? * 2 1999').next(new Date(JAN1))).toBeNull();
    expect(past.next(new Date('2024-12-29T00:00:00Z'))?.toISOString()).toBe(
      '2024-12-30T12:00:00.000Z',
    );
    expect(past.next(new Date('2024-12-30T12:00:00Z'))).toBeNull();
  });

  it('refuses bad Quartz input with INVALID_CRON naming the problem', () => {
    const cases: Array<[string, RegExp]> = [
      ['0 0 12 ? * 0', /quartz dialect numbers weekdays 1 \(SUN\) to 7 \(SAT\), got 0/],
      ['0 0 12 ? * 1-8', /got 8/],
      [
        '0 12 ? * 2',
        /the quartz dialect has 6 fields \(seconds first\) or 7 \(the year last\), got 5/,
      ],
      ['0 0 12 1 1 ? 1969', /years run from 1970 to 2099/],
      ['0 0 12 1 1 ? 27', /in year: write a year/],
      ['0 0 12 29 2 ? 2027', /it never fires/],
      ['0 0 12 ? * 6-2/2', /wraps around the end of the week/],
    ];
    for (const [expression, reason] of cases) {
      const error = thrown(() => quartz(expression));
      expect(error, expression).toBeInstanceOf(InvalidCronError);
      expect(error).toMatchObject({ code: 'INVALID_CRON', field: 'expression' });
      expect((error as Error).message, expression).toMatch(reason);
    }
    expect(thrown(() => cron('0 0 12 1 1 ? 2027', { dialect: 'unix' }))).toMatchObject({
      code: 'INVALID_CRON',
      message: expect.stringContaining('a seventh field (the year) is Quartz'),
    });
    expect(
      thrown(() => cron('* * * * *', { dialect: 'vixie' as unknown as 'unix' })),
    ).toMatchObject({ code: 'INVALID_OPTION', field: 'dialect' });
  });

  it('keeps the DST rules: a Sunday 02:30 job in Europe/Berlin', () => {
    const t = quartz('0 30 2 ? * 1', 'Europe/Berlin');
    // spring forward (2026-03-29, a Sunday): 02:30 does not exist, fires at 03:00 CEST
    expect(t.next(new Date('2026-03-28T12:00:00Z'))?.toISOString()).toBe(
      '2026-03-29T01:00:00.000Z',
    );
    // fall back (2026-10-25, a Sunday): only the first 02:30 (CEST)
    expect(firesBetween(t, '2026-10-24T12:00:00Z', '2026-10-26T00:00:00Z')).toEqual([
      Date.parse('2026-10-25T00:30:00Z'),
    ]);
    expect(fires(t, '2026-03-28T12:00:00Z', 1)).toEqual(
      fires(cron('30 2 * * SUN', { tz: 'Europe/Berlin' }), '2026-03-28T12:00:00Z', 1),
    );
  });
});

describe('no dialect: ambiguous expressions are refused, the rest read as before', () => {
  it('fails with AMBIGUOUS_CRON_DIALECT saying how each dialect reads the weekdays', () => {
    const error = thrown(() => cron('0 15 10 ? * 6L'));
    expect(error).toBeInstanceOf(AmbiguousCronDialectError);
    expect(isFleetcronError(error, 'AMBIGUOUS_CRON_DIALECT')).toBe(true);
    expect(error).toMatchObject({
      field: 'expression',
      readings: { quartz: 'last FRI', unix: 'last SAT' },
    });
    const message = (error as Error).message;
    expect(message).toContain('Quartz (1-7 = SUN-SAT) reads it as last FRI');
    expect(message).toContain('Unix cron (0-7, 0 and 7 = SUN) reads it as last SAT');
    expect(message).toContain("{ dialect: 'quartz' }");
    expect(thrown(() => cron('0 0 12 ? * 2-6'))).toMatchObject({
      code: 'AMBIGUOUS_CRON_DIALECT',
      readings: { quartz: 'MON-FRI', unix: 'TUE-SAT' },
    });
    expect(thrown(() => cron('0 0 0 ? * 6#3'))).toMatchObject({
      readings: { quartz: 'FRI#3', unix: 'SAT#3' },
    });
    // 7 fields: Unix has no year field, and the message says so
    expect(thrown(() => cron('0 0 12 ? * 2 2027'))).toMatchObject({
      code: 'AMBIGUOUS_CRON_DIALECT',
      message: expect.stringContaining('but has no year field'),
    });
  });

  it('reads everything that is not ambiguous exactly as before (Unix numbering)', () => {
    // 5 fields are never ambiguous, with or without ?
    expect(weekdaysOf(fires(cron('0 12 * * 2-6'), SUN4, 5))).toEqual(
      weekdaysOf(fires(cron('0 12 * * 2-6', { dialect: 'unix' }), SUN4, 5)),
    );
    expect(weekdaysOf(fires(cron('0 12 ? * 2-6'), SUN4, 1))).toEqual(['TUE']);
    // 6 fields without ?: Unix
    expect(weekdaysOf(fires(cron('0 0 12 * * 2-6'), SUN4, 1))).toEqual(['TUE']);
    expect(fires(cron('0 0 0 * * 5L'), JAN1, 1)).toEqual(['2026-01-30T00:00:00.000Z']);
    // 6 fields with ? but weekday names or no weekday numbers: the same in both
    expect(weekdaysOf(fires(cron('0 0 12 ? * MON-FRI'), SUN4, 1))).toEqual(['MON']);
    expect(fires(cron('0 0 12 10 * ?'), JAN1, 1)).toEqual(['2026-01-10T12:00:00.000Z']);
    // 7 fields without a dialect stay refused (the year field is Quartz's), with a hint
    expect(thrown(() => cron('0 0 12 ? * MON 2027'))).toMatchObject({
      code: 'INVALID_CRON',
      message: expect.stringContaining('a seventh field (the year) is Quartz'),
    });
    expect(cron('0 0 12 * * 2').describe()).toBe('cron(0 0 12 * * 2 UTC)');
  });
});

describe('the dialect in the description, the spec and the definition hash', () => {
  it('describe() and spec carry the dialect when given; the spec rebuilds the same trigger', () => {
    const t = quartz('0 15 10 ? * 6L', 'Europe/Berlin');
    expect(t.dialect).toBe('quartz');
    expect(t.describe()).toBe('cron(0 15 10 ? * 6L Europe/Berlin; dialect quartz)');
    expect(t.spec).toEqual({
      kind: 'cron',
      expression: '0 15 10 ? * 6L',
      tz: 'Europe/Berlin',
      dialect: 'quartz',
    });
    const rebuilt = triggerFromSpec(t.spec!);
    expect(fires(rebuilt, JAN1, 3)).toEqual(fires(t, JAN1, 3));
    expect(nextFires(t.spec!, Date.parse(JAN1), 1)).toEqual([Date.parse('2026-01-30T09:15:00Z')]);
    // no dialect given: spec and description as before
    expect(cron('0 12 * * 1').spec).toEqual({ kind: 'cron', expression: '0 12 * * 1', tz: 'UTC' });
    expect(cron('0 12 * * 1').dialect).toBeUndefined();
  });

  it('the definition hash differs between dialects, so a fleet that disagrees shows drift', () => {
    const job = (dialect?: 'unix' | 'quartz') =>
      registeredJob({
        name: 'report',
        trigger: cron('0 0 12 ? * 2-6', dialect ? { dialect } : { dialect: 'unix' }),
        leaseMs: 30_000,
        overlap: 'skip',
      });
    expect(job('quartz').definitionHash).not.toBe(job('unix').definitionHash);
    expect(job('quartz').definitionHash).toBe(job('quartz').definitionHash);
    const plain = { trigger: 'cron(0 12 * * 1 UTC)', leaseMs: 1000, overlap: 'skip' };
    expect(
      definitionHash({ ...plain, spec: { kind: 'cron', expression: '0 12 * * 1', tz: 'UTC' } }),
    ).toBe(
      registeredJob({ name: 'x', trigger: cron('0 12 * * 1'), leaseMs: 1000, overlap: 'skip' })
        .definitionHash,
    );
  });

  it('a Quartz job runs Monday to Friday on the fake clock, H seeded by the job name', async () => {
    const fake = new FakeClock(new Date('2026-01-09T11:00:00Z')); // a Friday
    const s = new Scheduler({
      lock: new MemoryLock({ clock: fake }),
      store: new MemoryStore(),
      clock: fake,
    });
    const ran: string[] = [];
    s.add({
      name: 'weekdays',
      trigger: quartz('0 0 12 ? * 2-6'),
      run: (ctx) => void ran.push(ctx.fireAt.toISOString()),
    });
    s.add({ name: 'hashed', trigger: quartz('0 H 12 ? * 2-6'), run: () => {} });
    expect(s.jobs().find((j) => j.name === 'hashed')?.trigger).toMatch(
      /^cron\(0 H 12 \? \* 2-6 UTC; dialect quartz; H: .* seeded by "hashed"\)$/,
    );
    // the expression cache is shared by both dialects; each describes its weekdays as written
    const unixSame = cron('0 H 12 ? * 1-5', { dialect: 'unix', seed: 'hashed' }).describe();
    expect(unixSame).toMatch(/; H: 0 \d+ 12 \? \* 1-5 seeded by "hashed"\)$/);
    expect(quartz('0 H 12 ? * 2-6').withSeed('hashed').describe()).toMatch(
      /; H: 0 \d+ 12 \? \* 2-6 seeded by "hashed"\)$/,
    );
    s.start();
    await fake.advance(74 * 3_600_000); // to Monday 2026-01-12 13:00: no Saturday, no Sunday
    const stopping = s.stop();
    await fake.advance(1_000);
    await stopping;
    expect(ran).toEqual(['2026-01-09T12:00:00.000Z', '2026-01-12T12:00:00.000Z']);
  });
});
