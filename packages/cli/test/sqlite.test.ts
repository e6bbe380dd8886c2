import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { cron, Scheduler } from '@fleetcron/core';
import { SqliteLock } from '@fleetcron/lock-sqlite';
import { SqliteStore } from '@fleetcron/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/args.js';
import { chooseBackend } from '../src/connect.js';
import { sqlitePath } from '../src/sqlite-url.js';
import { hasStackTrace, runFleetcron } from './built-bin.js';

describe('sqlitePath', () => {
  it.each([
    ['sqlite:///var/lib/app/fleet.db', '/var/lib/app/fleet.db'],
    ['sqlite://localhost/var/lib/app/fleet.db', '/var/lib/app/fleet.db'],
    ['sqlite:/var/lib/app/fleet.db', '/var/lib/app/fleet.db'],
    ['SQLITE:///var/lib/my%20app/fleet.db', '/var/lib/my app/fleet.db'],
    ['sqlite:fleet.db', '/srv/app/fleet.db'],
    ['sqlite:./data/fleet.db', '/srv/app/data/fleet.db'],
    ['sqlite:../fleet.db', '/srv/fleet.db'],
    ['/var/lib/app/fleet.db', '/var/lib/app/fleet.db'], // --sqlite takes a plain path
    ['data/fleet%20x.db', '/srv/app/data/fleet%20x.db'], // a plain path is not decoded
  ])('reads %s as %s (relative to the current directory /srv/app)', (value, path) => {
    expect(sqlitePath(value, '/srv/app')).toBe(path);
  });

  it.each([
    ['sqlite://db.internal/fleet.db', 'names a host ("db.internal")'],
    ['sqlite:///fleet.db?mode=ro', 'has a query or fragment'],
    ['sqlite:', 'names no SQLite file'],
    ['sqlite://', 'names no SQLite file'],
    ['sqlite::memory:', 'names no SQLite file'],
    ['sqlite:///bad%zz.db', 'bad %-escape'],
  ])('refuses %s (%s), naming both forms', (value, reason) => {
    expect(() => sqlitePath(value, '/srv/app')).toThrow(UsageError);
    expect(() => sqlitePath(value, '/srv/app')).toThrow(reason);
    expect(() => sqlitePath(value, '/srv/app')).toThrow(
      'use sqlite:///absolute/path.db (three slashes) or sqlite:relative/path.db',
    );
  });

  it('FLEETCRON_URL=sqlite:… and --sqlite pick the sqlite backend; a bad one is a usage error', () => {
    expect(chooseBackend({}, { FLEETCRON_URL: 'sqlite:///a/fleet.db' })).toEqual({
      kind: 'sqlite',
      url: 'sqlite:///a/fleet.db',
    });
    expect(chooseBackend({ sqlite: 'fleet.db' }, {})).toEqual({ kind: 'sqlite', url: 'fleet.db' });
    expect(() => chooseBackend({ sqlite: 'a.db', redis: 'redis://x' }, {})).toThrow(
      'give one backend, got --redis and --sqlite',
    );
    expect(() => chooseBackend({}, { FLEETCRON_URL: 'sqlite://host/a.db' })).toThrow(UsageError);
  });
});

describe('fleetcron on a SQLite file written by two real Schedulers (SqliteLock + SqliteStore)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-cli-sqlite-'));
  const file = join(dir, 'fleet.db');
  const ledger: string[] = [];
  const schedulers: Scheduler[] = [];
  const closers: Array<{ close(): Promise<void> }> = [];
  let store: SqliteStore;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const lock = new SqliteLock(file);
      store = new SqliteStore(file);
      closers.push(lock, store);
      await lock.open(); // creates the file: the CLI opens only an existing one
      await store.open();
      const scheduler = new Scheduler({
        lock,
        store,
        instanceId: `cli-sqlite-${i + 1}`,
        heartbeatMs: 1000,
      });
      scheduler.add({
        name: 'report',
        trigger: cron('0 3 * * *', { tz: 'Europe/Berlin' }),
        run: (ctx) => {
          ledger.push(ctx.instanceId);
        },
      });
      scheduler.start();
      schedulers.push(scheduler);
    }
  });

  afterAll(async () => {
    await Promise.all(schedulers.map((s) => s.stop({ drainMs: 1000 })));
    for (const closer of closers) await closer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const url = () => ({ FLEETCRON_URL: `sqlite://${file}` }); // sqlite:///tmp/…/fleet.db

  it('lists both instances, runs the job once on request (--sqlite PATH), and shows it in history', async () => {
    await until('both instances in the registry', async () => {
      const run = await runFleetcron(['instances', '--json'], url());
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as unknown[]).length === 2;
    });
    const run = await runFleetcron(['run', 'report', '--by', 'alice', '--sqlite', file]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('run of report requested');
    const done = await until('the manual run in history', async () => {
      const page = await store.history('report', {});
      return page.executions.find((e) => e.requestedBy === 'alice' && e.finishedAt !== null);
    });
    expect(done?.status).toBe('succeeded');
    expect(ledger).toHaveLength(1);
    const history = await runFleetcron(['history', 'report'], url());
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/succeeded .+manual by alice/);
  });

  it('jobs: the job with its trigger, both instances and the last outcome; a relative URL too', async () => {
    const jobsOf = async (env: Record<string, string>) => {
      const run = await runFleetcron(['jobs', '--json'], env);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    };
    const jobs = await jobsOf(url());
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      name: 'report',
      trigger: 'cron(0 3 * * * Europe/Berlin)',
      definedBy: ['cli-sqlite-1', 'cli-sqlite-2'],
      lastStatus: 'succeeded',
      paused: false,
    });
    // sqlite:<relative path> is read against the directory fleetcron runs in (here: the test's)
    const relativeUrl = `sqlite:${relative(process.cwd(), file)}`;
    expect(relativeUrl).toMatch(/^sqlite:\.\.\//);
    expect(await jobsOf({ FLEETCRON_URL: relativeUrl })).toEqual(jobs.map(withoutNextFires));
  });

  it('a missing file is exit 3 and creates nothing; a URL with a host is exit 2', async () => {
    const missing = join(dir, 'typo.db');
    const run = await runFleetcron(['jobs'], { FLEETCRON_URL: `sqlite://${missing}` });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`sqlite backend unavailable during opening ${missing}`);
    expect(run.stderr).toContain('no such file');
    expect(hasStackTrace(run.stderr)).toBe(false);
    expect(existsSync(missing)).toBe(false);

    const host = await runFleetcron(['jobs'], { FLEETCRON_URL: `sqlite://db.internal${file}` });
    expect(host.code).toBe(2);
    expect(host.stderr).toContain('names a host');
  });
});

/** A job as `jobs --json` prints it, its next fires left out (they move with the clock). */
function withoutNextFires(job: Record<string, unknown>): Record<string, unknown> {
  return { ...job, nextFires: expect.any(Array) };
}

/** Polls `check` until truthy or throws after `timeoutMs`. */
async function until<T>(what: string, check: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
