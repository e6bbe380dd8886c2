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
