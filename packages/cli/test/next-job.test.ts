import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Calendar, cron, exclusions, type RegisteredJob } from '@fleetcron/core';
import { registeredJob } from '@fleetcron/core/backend';
import { SqliteStore } from '@fleetcron/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../src/io.js';
import { runCli } from '../src/main.js';

/** Runs the CLI in this process with captured output. */
async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    env: {},
  };
  const code = await runCli(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function job(name: string, exclude?: Calendar): RegisteredJob {
  return registeredJob({
    name,
    trigger: cron('0 3 * * *', { tz: 'Europe/Berlin' }),
    leaseMs: 30_000,
    overlap: 'skip',
    exclude,
  });
}

describe('fleetcron next --job: excluded fires marked with the reason (SQLite fleet)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-cli-next-'));
  const file = join(dir, 'fleet.db');
  let store: SqliteStore;

  beforeAll(async () => {
    store = new SqliteStore(file);
    await store.open();
    const holidays = exclusions({
      dates: [
        { date: '2026-12-24', reason: 'holiday: Christmas Eve' },
        { date: '2026-12-25', reason: 'holiday: Christmas Day' },
      ],
      weekly: [{ days: ['sun'], from: '00:00', to: '24:00', reason: 'Sunday' }],
    });
    await store.heartbeat({
      instanceId: 'worker-1',
      ...{ host: 'h', pid: 1, version: '0.1.0', startedAt: Date.now(), heartbeatMs: 600_000 },
      clock: null,
      jobs: [
        job('nightly', holidays),
        job('custom', { excludedBy: () => null, describe: () => 'quiet()' }),
      ],
    });
  });

  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the next fires with an EXCLUDED column', async () => {
    const run = await cli([
      'next',
      '--job',
      'nightly',
      '--sqlite',
      file,
      '-n',
      '5',
      '--after',
      '2026-12-22T12:00:00Z',
    ]);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    expect(run.out.split('\n')).toEqual([
      '#  UTC                       Europe/Berlin               EXCLUDED',
      '1  2026-12-23T02:00:00.000Z  2026-12-23 03:00:00 +01:00',
      '2  2026-12-24T02:00:00.000Z  2026-12-24 03:00:00 +01:00  excluded: holiday: Christmas Eve',
      '3  2026-12-25T02:00:00.000Z  2026-12-25 03:00:00 +01:00  excluded: holiday: Christmas Day',
      '4  2026-12-26T02:00:00.000Z  2026-12-26 03:00:00 +01:00',
      '5  2026-12-27T02:00:00.000Z  2026-12-27 03:00:00 +01:00  excluded: Sunday',
    ]);
  });

  it('--json: the fires with excluded reasons and the calendar', async () => {
    const run = await cli([
      'next',
      '--job',
      'nightly',
      '--sqlite',
      file,
      '-n',
      '3',
      '--after',
      '2026-12-23T12:00:00Z',
      '--json',
    ]);
    expect(run.code, run.err).toBe(0);
    const body = JSON.parse(run.out) as {
      zone: string;
      exclude: { description: string };
      fires: Array<{ utc: string; excluded?: string }>;
    };
    expect(body.zone).toBe('Europe/Berlin');
    expect(body.exclude.description).toBe('exclusions(2 dates, 1 weekly window)');
    expect(body.fires.map((f) => f.excluded ?? null)).toEqual([
      'holiday: Christmas Eve',
      'holiday: Christmas Day',
      null,
    ]);
  });

  it('a custom calendar: nothing marked, a note says why; an unknown job exits 4', async () => {
    const run = await cli(['next', '--job', 'custom', '--sqlite', file, '-n', '2']);
    expect(run.code).toBe(0);
    expect(run.out).not.toContain('excluded:');
    expect(run.err).toContain('custom calendar (quiet())');
    const unknown = await cli(['next', '--job', 'nightlly', '--sqlite', file]);
    expect(unknown.code).toBe(4);
    expect(unknown.err).toContain('did you mean "nightly"?');
  });

  it('jobs marks an excluded next fire; usage errors for mixed forms', async () => {
    // the real clock: the next fire of 'nightly' is excluded only on listed days, so check the form
    const jobs = await cli(['jobs', '--sqlite', file, '--json']);
    expect(jobs.code, jobs.err).toBe(0);
    const listed = JSON.parse(jobs.out) as Array<{ name: string; exclude: unknown }>;
    expect(listed.find((j) => j.name === 'nightly')?.exclude).toMatchObject({
      description: 'exclusions(2 dates, 1 weekly window)',
    });
    const mixed = await cli(['next', '0 3 * * *', '--job', 'nightly', '--sqlite', file]);
    expect(mixed.code).toBe(2);
    expect(mixed.err).toContain('takes no expression');
    const tz = await cli(['next', '--job', 'nightly', '--tz', 'UTC', '--sqlite', file]);
    expect(tz.code).toBe(2);
    expect(tz.err).toContain('--tz does not apply');
    const backendOnly = await cli(['next', '0 3 * * *', '--sqlite', file]);
    expect(backendOnly.code).toBe(2);
    expect(backendOnly.err).toContain('only with --job');
  });
});
