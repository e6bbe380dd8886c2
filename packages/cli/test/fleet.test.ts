import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Store } from '@fleetcron/core';
import { EtcdStore } from '@fleetcron/store-etcd';
import { PostgresStore } from '@fleetcron/store-postgres';
import { RedisStore } from '@fleetcron/store-redis';
import type {} from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUILT_BIN, hasStackTrace, runFleetcron } from './built-bin.js';
import { seedFleet } from './seed.js';

interface Target {
  /** Arguments naming the backend and this test's namespace. */
  args: string[];
  /** The same as FLEETCRON_URL plus the namespace option. */
  url: string;
  namespace: string[];
  store: Store;
  close(): Promise<void>;
}

const TARGETS: Record<string, () => Promise<Target>> = {
  async postgres() {
    const url = inject('fleetcronPostgresUrl');
    const schema = `cli_${randomUUID().slice(0, 8)}`;
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => {});
    const store = new PostgresStore(pool, { schema });
    await store.migrate();
    return {
      args: ['--postgres', url, '--schema', schema],
      url,
      namespace: ['--schema', schema],
      store,
      close: () => pool.end(),
    };
  },
  async redis() {
    const url = inject('fleetcronRedisUrl');
    const prefix = `cli-${randomUUID()}`;
    const client = new Redis(url);
    client.on('error', () => {});
    const store = new RedisStore(client, { prefix });
    return {
      args: ['--redis', url, '--prefix', prefix],
      url,
      namespace: ['--prefix', prefix],
      store,
      close: async () => {
        client.disconnect();
      },
    };
  },
  async etcd() {
    const endpoint = inject('fleetcronEtcdEndpoints')[0] as string;
    const prefix = `cli/${randomUUID()}/`;
    const client = new Etcd3({ hosts: endpoint });
    const store = new EtcdStore(client, { prefix });
    return {
      args: ['--etcd', endpoint, '--prefix', prefix],
      url: endpoint.replace(/^http:/, 'etcd:'),
      namespace: ['--prefix', prefix],
      store,
      close: async () => {
        await store.close();
        client.close();
      },
    };
  },
};

describe.each(Object.keys(TARGETS))('fleetcron against %s', (backend) => {
  let target: Target;
  beforeAll(async () => {
    target = await (TARGETS[backend] as () => Promise<Target>)();
    await seedFleet(target.store);
  });
  afterAll(() => target?.close());

  it('instances and jobs: tables by default, JSON with --json, FLEETCRON_URL instead of a flag', async () => {
    const instances = await runFleetcron(['instances', ...target.args]);
    expect(instances.code, instances.stderr).toBe(0);
    expect(instances.stdout).toMatch(/^INSTANCE\s+HOST:PID\s+VERSION/);
    expect(instances.stdout).toMatch(/\ni-1\s+seed-host:7\s+0\.1\.0/);
    const jobs = await runFleetcron(['jobs', ...target.args]);
    expect(jobs.code).toBe(0);
    const lines = jobs.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^JOB\s+TRIGGER\s+NEXT \(UTC\)\s+NEXT \(ZONE\)\s+STATE\s+LAST\s+INSTANCES$/,
    );
    expect(lines[1]).toMatch(
      /^billing\s+cron\(0 3 \* \* \* Europe\/Berlin\)\s+\S+Z\s+\S+ 03:00:00 \+0[12]:00 Europe\/Berlin\s+active\s+succeeded/,
    );
    expect(lines[2]).toMatch(/^cleanup\s+every\(60000ms\)/);
    const json = await runFleetcron(['jobs', ...target.namespace, '--json'], {
      FLEETCRON_URL: target.url,
    });
    expect(json.code, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as Array<{ name: string; nextFires: unknown[] }>;
    expect(parsed.map((j) => [j.name, j.nextFires.length])).toEqual([
      ['billing', 5],
      ['cleanup', 5],
    ]);
  });

  it('history: newest first, status filter, paging with --cursor', async () => {
    const all = await runFleetcron(['history', 'billing', ...target.args]);
    expect(all.code).toBe(0);
    expect(all.stdout.trim().split('\n')).toHaveLength(7);
    const failed = await runFleetcron([
      'history',
      'billing',
      '--status',
      'failed',
      '--json',
      ...target.args,
    ]);
    const page = JSON.parse(failed.stdout) as {
      executions: Array<{ status: string; error: string }>;
    };
    expect(page.executions.map((e) => e.status)).toEqual(['failed', 'failed']);
    expect(page.executions[0]?.error).toContain('card declined');
    const first = await runFleetcron(['history', 'billing', '--limit', '4', ...target.args]);
    const cursor = /more: --cursor (\S+)/.exec(first.stderr)?.[1];
    expect(cursor).toBeTruthy();
    const rest = await runFleetcron([
      'history',
      'billing',
      '--limit',
      '4',
      '--cursor',
      cursor as string,
      '--json',
      ...target.args,
    ]);
    expect(
      (JSON.parse(rest.stdout) as { executions: unknown[]; nextCursor: null }).executions,
    ).toHaveLength(2);
  });

  it('pause, resume and run record who asked through the Store', async () => {
    const pause = await runFleetcron(['pause', 'billing', '--by', 'alice', ...target.args]);
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toContain('billing paused on every instance (by alice)');
    expect(await target.store.getJobState('billing')).toMatchObject({
      paused: true,
      pausedBy: 'alice',
    });
    const jobs = await runFleetcron(['jobs', ...target.args]);
    expect(jobs.stdout).toMatch(/\nbilling\s.+paused by alice/);
    expect((await runFleetcron(['resume', 'billing', ...target.args])).code).toBe(0);
    expect((await target.store.getJobState('billing')).paused).toBe(false);
    const run = await runFleetcron(['run', 'cleanup', '--json', ...target.args]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, job: 'cleanup', action: 'run' });
    const taken = (await target.store.takeRunRequests?.(['cleanup'], 'i-1')) ?? [];
    expect(taken).toHaveLength(1);
    expect(taken[0]?.requestedBy).toMatch(/^cli:.+@.+/);
  });

  it('audit: who paused, resumed and ran what, newest first, filters and pages, notes terminal-safe', async () => {
    // a bidi override and a carriage return (which would overwrite the line) in a stored note
    const note = 'db-2 disk full\u202Eexe.fdp\rOK\nsecond line';
    const older = await runFleetcron(['resume', 'cleanup', '--by', 'dave', ...target.args]);
    expect(older.code, older.stderr).toBe(0);
    const pause = await runFleetcron([
      'pause',
      'billing',
      '--by',
      'alice',
      '--note',
      note,
      ...target.args,
    ]);
    expect(pause.code, pause.stderr).toBe(0);
    expect((await runFleetcron(['resume', 'billing', '--by', 'bob', ...target.args])).code).toBe(0);
    const run = await runFleetcron([
      'run',
      'cleanup',
      '--by',
      'carol',
      '--note',
      'rerun',
      '--json',
      ...target.args,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const requestId = (JSON.parse(run.stdout) as { request: { id: string } }).request.id;

    const json = await runFleetcron(['audit', '--limit', '3', '--json', ...target.args]);
    expect(json.code, json.stderr).toBe(0);
    const page = JSON.parse(json.stdout) as {
      entries: Array<{
        action: string;
        job: string;
        by: string;
        note: string | null;
        requestId: string | null;
        at: number;
      }>;
      nextCursor: string | null;
    };
    expect(page.entries.map((e) => [e.action, e.job, e.by, e.note])).toEqual([
      ['run', 'cleanup', 'carol', 'rerun'],
      ['resume', 'billing', 'bob', null],
      ['pause', 'billing', 'alice', note],
    ]);
    expect(page.entries[0]?.requestId).toBe(requestId);
    expect(page.nextCursor).not.toBeNull(); // dave's resume at least

    // the table: the note's first line, its bidi override printed as an inert escape
    const text = await runFleetcron(['audit', '--limit', '3', ...target.args]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^AT\s+BY\s+ACTION\s+JOB\s+DETAILS\s+NOTE$/);
    expect(lines[1]).toMatch(
      new RegExp(`^\\S+Z\\s+carol\\s+run\\s+cleanup\\s+request=${requestId}\\s+rerun$`),
    );
    expect(lines[3]).toMatch(/alice\s+pause\s+billing\s+db-2 disk full\\u202eexe\.fdp\\u000dOK …$/);
    expect(text.stdout).not.toMatch(/[\u202E\r]/);
    expect(text.stderr).toMatch(/^more: --cursor \S+\n$/);

    // filters, and the next page from the cursor
    const pauses = await runFleetcron([
      'audit',
      '--job',
      'billing',
      '--action',
      'pause',
      '--json',
      ...target.args,
    ]);
    const paused = (JSON.parse(pauses.stdout) as typeof page).entries;
    expect(paused.length).toBeGreaterThanOrEqual(1);
    expect(paused.every((e) => e.job === 'billing' && e.action === 'pause')).toBe(true);
    expect(paused[0]?.by).toBe('alice');
    const first = await runFleetcron(['audit', '--limit', '1', ...target.args]);
    const cursor = /more: --cursor (\S+)/.exec(first.stderr)?.[1] as string;
    const next = await runFleetcron([
      'audit',
      '--limit',
      '1',
      '--cursor',
      cursor,
      '--json',
      ...target.args,
    ]);
    expect((JSON.parse(next.stdout) as typeof page).entries.map((e) => e.action)).toEqual([
      'resume',
    ]);
    const bad = await runFleetcron(['audit', '--cursor', 'nope', ...target.args]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('cursor');
    expect(hasStackTrace(bad.stderr)).toBe(false);
  });

  it('an unknown job: clear message, exit 4, no stack trace', async () => {
    const far = await runFleetcron(['pause', 'zzz', ...target.args]);
    expect(far.stderr).toBe('fleetcron: unknown job "zzz"; known jobs: billing, cleanup\n');
    for (const command of ['history', 'pause', 'resume', 'run']) {
      const run = await runFleetcron([command, 'biling', ...target.args]);
      expect(run.code, command).toBe(4);
      expect(run.stderr).toBe('fleetcron: unknown job "biling"; did you mean "billing"?\n');
    }
  });

  it('serve: the console and API over the store, 401 without the token, stops on SIGTERM', async () => {
    const token = `serve-${randomUUID()}`;
    const child = spawn(process.execPath, [BUILT_BIN, 'serve', '--port', '0', ...target.args], {
      env: { ...process.env, FLEETCRON_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const origin = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          const match = /on (http:\/\/\S+?)\/ /.exec(out);
          if (match) resolve(match[1] as string);
        });
        void exited.then((code) => reject(new Error(`serve exited ${code}`)));
      });
      expect((await fetch(`${origin}/api/jobs`)).status).toBe(401);
      const jobs = await fetch(`${origin}/api/jobs`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(
        ((await jobs.json()) as { jobs: Array<{ name: string }> }).jobs.map((j) => j.name),
      ).toEqual(['billing', 'cleanup']);
      expect((await fetch(`${origin}/`)).headers.get('content-security-policy')).toContain(
        "default-src 'none'",
      );
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});

describe('unreachable backends and bad URLs', () => {
  it('exit 3 with the backend and the reason, no stack trace', async () => {
    const pgDown = await runFleetcron(['jobs', '--postgres', 'postgres://127.0.0.1:9/nowhere']);
    expect(pgDown.code).toBe(3);
    expect(pgDown.stderr).toMatch(
      /^fleetcron: postgres backend unavailable during connecting to postgres:\/\/127\.0\.0\.1:9\/nowhere: .*ECONNREFUSED/,
    );
    const redisDown = await runFleetcron(['instances'], { FLEETCRON_URL: 'redis://127.0.0.1:9' });
    expect(redisDown.code).toBe(3);
    expect(redisDown.stderr).toMatch(/^fleetcron: redis backend unavailable/);
    const etcdDown = await runFleetcron(['jobs', '--etcd', 'http://127.0.0.1:9']);
    expect(etcdDown.code).toBe(3);
    expect(etcdDown.stderr).toMatch(
      /^fleetcron: etcd backend unavailable during connecting to http:\/\/127\.0\.0\.1:9/,
    );
    const noTables = await runFleetcron([
      'jobs',
      '--postgres',
      inject('fleetcronPostgresUrl'),
      '--schema',
      'no_such_schema',
    ]);
    expect(noTables.code).toBe(3);
    expect(noTables.stderr).toContain('the store has no tables in this schema: check --schema');
    const secret = await runFleetcron(['jobs', '--postgres', 'postgres://u:hunter2@127.0.0.1:9/x']);
    expect(secret.stderr).not.toContain('hunter2');
    for (const run of [pgDown, redisDown, etcdDown, noTables, secret])
      expect(hasStackTrace(run.stderr)).toBe(false);
  });

  it('exit 2 for a malformed URL, an unknown scheme or no backend at all', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['jobs', '--redis', 'not a url'], {}, /is not a URL/],
      [['jobs'], { FLEETCRON_URL: 'mysql://db/x' }, /has no known scheme/],
      [['jobs'], {}, /no backend: pass --postgres URL/],
      [['jobs', '--postgres', 'postgres://a/b', '--redis', 'redis://c'], {}, /give one backend/],
    ];
    for (const [args, env, message] of cases) {
      const run = await runFleetcron(args, env);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(hasStackTrace(run.stderr)).toBe(false);
    }
  });
});
