import { describe, expect, it } from 'vitest';
import { hasStackTrace, runFleetcron } from './built-bin.js';

describe('fleetcron next', () => {
  it('prints the next fires in UTC and the zone, marking a fire moved by the spring-forward gap', async () => {
    const run = await runFleetcron([
      'next',
      '30 2 * * *',
      '--tz',
      'Europe/Berlin',
      '-n',
      '3',
      '--after',
      '2026-03-27T12:00:00Z',
    ]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^#\s+UTC\s+Europe\/Berlin\s+DST$/);
    expect(lines[1]).toMatch(/2026-03-28T01:30:00.000Z\s+2026-03-28 02:30:00 \+01:00$/);
    expect(lines[2]).toContain('2026-03-29T01:00:00.000Z  2026-03-29 03:00:00 +02:00');
    expect(lines[2]).toContain('moved: 02:30 does not exist (clocks went forward); runs at 03:00');
    expect(lines[3]).toMatch(/2026-03-30T00:30:00.000Z\s+2026-03-30 02:30:00 \+02:00$/);
  });

  it('--json: skipped wall times in a gap, repeated runs and once-only fires in the fall-back hour', async () => {
    const spring = await runFleetcron([
      'next',
      '*/30 * * * *',
      '--tz',
      'Europe/Berlin',
      '-n',
      '2',
      '--after',
      '2026-03-29T00:15:00Z',
      '--json',
    ]);
    const springFires = JSON.parse(spring.stdout).fires as Array<{
      utc: string;
      notes: Array<{ kind: string; wallTimes?: string[] }>;
    }>;
    expect(springFires.map((f) => f.utc)).toEqual([
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
    ]);
    expect(springFires[1]?.notes).toEqual([
      expect.objectContaining({
        kind: 'skipped',
        wallTimes: ['2026-03-29 02:00:00', '2026-03-29 02:30:00'],
      }),
    ]);
    const autumn = await runFleetcron([
      'next',
      '*/30 * * * *',
      '--tz',
      'Europe/Berlin',
      '-n',
      '4',
      '--after',
      '2026-10-25T00:15:00Z',
      '--json',
    ]);
    const kinds = (
      JSON.parse(autumn.stdout).fires as Array<{ local: string; notes: Array<{ kind: string }> }>
    ).map((f) => [f.local, f.notes.map((n) => n.kind).join(',')]);
    expect(kinds).toEqual([
      ['2026-10-25 02:30:00 +02:00', ''],
      ['2026-10-25 02:00:00 +01:00', 'repeated'],
      ['2026-10-25 02:30:00 +01:00', 'repeated'],
      ['2026-10-25 03:00:00 +01:00', ''],
    ]);
    const daily = await runFleetcron([
      'next',
      '30 2 * * *',
      '--tz',
      'Europe/Berlin',
      '-n',
      '2',
      '--after',
      '2026-10-24T12:00:00Z',
      '--json',
    ]);
    const dailyFires = JSON.parse(daily.stdout).fires as Array<{
      utc: string;
      notes: Array<{ kind: string }>;
    }>;
    expect(dailyFires.map((f) => [f.utc, f.notes.map((n) => n.kind).join()])).toEqual([
      ['2026-10-25T00:30:00.000Z', 'once'],
      ['2026-10-26T01:30:00.000Z', ''],
    ]);
  });

  it('defaults to UTC and 10 fires', async () => {
    const run = await runFleetcron(['next', '@hourly', '--json']);
    const body = JSON.parse(run.stdout) as { tz: string; fires: Array<{ at: number }> };
    expect(body.tz).toBe('UTC');
    expect(body.fires).toHaveLength(10);
    expect(body.fires[0]?.at).toBeGreaterThan(Date.now() - 5000);
  });

  it('exits 1 with the typed message for a bad expression or zone', async () => {
    const run = await runFleetcron(['next', '0 25 * * *']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('invalid cron expression "0 25 * * *"');
    expect(hasStackTrace(run.stderr)).toBe(false);
  });
});

describe('fleetcron validate', () => {
  it('exits 0 for a valid expression and 1 with the typed error message otherwise', async () => {
    const ok = await runFleetcron(['validate', '0 3 * * MON-FRI', '--tz', 'Europe/Berlin']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^valid: cron\(0 3 \* \* MON-FRI Europe\/Berlin\), next fire \d{4}-/);
    const bad = await runFleetcron(['validate', '61 * * * *']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^invalid: expression: invalid cron expression "61 \* \* \* \*"/);
    const zone = await runFleetcron(['validate', '0 3 * * *', '--tz', 'Mars/Olympus', '--json']);
    expect(zone.code).toBe(1);
    expect(JSON.parse(zone.stdout)).toMatchObject({
      valid: false,
      error: { code: 'UNKNOWN_TIMEZONE', field: 'tz' },
    });
    for (const run of [ok, bad, zone]) expect(hasStackTrace(run.stdout + run.stderr)).toBe(false);
  });
});

describe('--dialect quartz|unix', () => {
  const AFTER = '2026-01-01T00:00:00Z'; // a Thursday
  const utcOf = (stdout: string) =>
    (JSON.parse(stdout).fires as Array<{ utc: string }>).map((f) => f.utc);

  it('next --dialect quartz reads Quartz weekdays: 6L the last Friday, 2-6 Monday to Friday', async () => {
    const lastFriday = await runFleetcron([
      'next',
      '0 15 10 ? * 6L',
      '--dialect',
      'quartz',
      '-n',
      '2',
      '--after',
      AFTER,
      '--json',
    ]);
    expect(lastFriday.code).toBe(0);
    expect(JSON.parse(lastFriday.stdout)).toMatchObject({ dialect: 'quartz' });
    expect(utcOf(lastFriday.stdout)).toEqual([
      '2026-01-30T10:15:00.000Z',
      '2026-02-27T10:15:00.000Z',
    ]);
    const unix = await runFleetcron([
      'next',
      '0 15 10 ? * 6L',
      '--dialect',
      'unix',
      '-n',
      '1',
      '--after',
      AFTER,
      '--json',
    ]);
    expect(utcOf(unix.stdout)).toEqual(['2026-01-31T10:15:00.000Z']); // the last Saturday
    const weekdays = await runFleetcron([
      'next',
      '0 0 12 ? * 2-6',
      '--dialect',
      'quartz',
      '-n',
      '3',
      '--after',
      AFTER,
    ]);
    expect(weekdays.code).toBe(0);
    const lines = weekdays.stdout.trim().split('\n');
    expect(lines.slice(1).map((l) => l.split(/\s+/)[1])).toEqual([
      '2026-01-01T12:00:00.000Z', // Thu
      '2026-01-02T12:00:00.000Z', // Fri
      '2026-01-05T12:00:00.000Z', // Mon, not Sat 3rd
    ]);
    const year = await runFleetcron([
      'next',
      '0 0 12 1 1 ? 2027',
      '--dialect',
      'quartz',
      '--after',
      AFTER,
      '--json',
    ]);
    expect(utcOf(year.stdout)).toEqual(['2027-01-01T12:00:00.000Z']);
  });

  it('without --dialect an ambiguous expression exits 1 saying how each dialect reads it', async () => {
    const next = await runFleetcron(['next', '0 15 10 ? * 6L']);
    expect(next.code).toBe(1);
    expect(next.stderr).toContain('is ambiguous');
    expect(next.stderr).toContain('Quartz (1-7 = SUN-SAT) reads it as last FRI');
    expect(next.stderr).toContain('reads it as last SAT');
    expect(next.stderr).toContain('--dialect quartz|unix');
    expect(hasStackTrace(next.stderr)).toBe(false);
    const validate = await runFleetcron(['validate', '0 0 12 ? * 2-6', '--json']);
    expect(validate.code).toBe(1);
    expect(JSON.parse(validate.stdout)).toMatchObject({
      valid: false,
      error: { code: 'AMBIGUOUS_CRON_DIALECT', field: 'expression' },
    });
  });

  it('validate --dialect accepts the expression and names the dialect; a bad value exits 2', async () => {
    const ok = await runFleetcron(['validate', '0 0 12 ? * 2-6', '--dialect', 'quartz']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^valid: cron\(0 0 12 \? \* 2-6 UTC; dialect quartz\), next fire /);
    const json = await runFleetcron(['validate', '0 0 12 ? * 2-6', '--dialect', 'unix', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, dialect: 'unix' });
    const bad = await runFleetcron(['validate', '* * * * *', '--dialect', 'vixie']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^fleetcron: --dialect must be quartz or unix, got "vixie"/);
    const notHere = await runFleetcron(['jobs', '--dialect', 'quartz']);
    expect(notHere.code).toBe(2);
  });
});

describe('bad arguments', () => {
  it('print the reason and the usage, exit 2', async () => {
    const cases: string[][] = [
      ['next'],
      ['frobnicate'],
      ['next', '* * * * *', '--bogus'],
      ['jobs', '--tz', 'UTC'],
      ['next', '* * * * *', '-n', '0'],
    ];
    for (const args of cases) {
      const run = await runFleetcron(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^fleetcron: .+\n\nUsage: fleetcron <command>/);
      expect(hasStackTrace(run.stderr)).toBe(false);
    }
  });

  it('--help prints the usage and exits 0', async () => {
    const run = await runFleetcron(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Exit codes: 0 ok');
  });
});
