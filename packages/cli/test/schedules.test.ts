import { randomUUID } from 'node:crypto';
import { PostgresStore } from '@fleetcron/store-postgres';
import type {} from '@fleetcron/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hasStackTrace, runFleetcron } from './built-bin.js';

describe('fleetcron schedules (PostgreSQL)', () => {
  let args: string[];
  let pool: pg.Pool;
  let store: PostgresStore;
  beforeAll(async () => {
    const url = inject('fleetcronPostgresUrl');
    const schema = `cli_sched_${randomUUID().slice(0, 8)}`;
    pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => {});
    store = new PostgresStore(pool, { schema });
    await store.migrate();
    args = ['--postgres', url, '--schema', schema];
  });
  afterAll(() => pool?.end());

  it('create, list, get, update with the version read, enable/disable, remove: recorded with --by', async () => {
    const created = await runFleetcron([
      'schedules',
      'create',
      '--id',
      'acme/daily',
      '--handler',
      'reports.daily',
      '--cron',
      '0 3 * * *',
      '--tz',
      'Europe/Berlin',
      '--data',
      '{"customer":"acme"}',
      '--options',
      '{"timeoutMs":60000}',
      '--by',
      'alice',
      ...args,
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toBe('created acme/daily (version 1, by alice)');
    expect(await store.getSchedule('acme/daily')).toMatchObject({
      handler: 'reports.daily',
      trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' },
      data: { customer: 'acme' },
      options: { timeoutMs: 60_000 },
      createdBy: 'alice',
    });
    const list = await runFleetcron(['schedules', 'list', ...args]);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+HANDLER\s+TRIGGER\s+ENABLED\s+VERSION\s+SERVED\s+UPDATED$/);
    expect(lines[1]).toMatch(
      /^acme\/daily\s+reports\.daily\s+cron 0 3 \* \* \* Europe\/Berlin\s+yes\s+1\s+UNSERVED\s+\S+Z by alice$/,
    );
    expect(list.stderr).toContain('warning: no live instance serves acme/daily');
    const updated = await runFleetcron([
      'schedules',
      'update',
      'acme/daily',
      '--expected-version',
      '1',
      '--cron',
      '0 4 * * *',
      '--tz',
      'Europe/Berlin',
      '--by',
      'bob',
      '--json',
      ...args,
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      version: 2,
      updatedBy: 'bob',
      data: { customer: 'acme' },
    });
    const stale = await runFleetcron([
      'schedules',
      'update',
      'acme/daily',
      '--expected-version',
      '1',
      '--data',
      '1',
      ...args,
    ]);
    expect(stale.code, 'a stale version exits 5').toBe(5);
    expect(stale.stderr).toContain(
      'changed by someone else (expected version 1, it is at version 2)',
    );
    expect(hasStackTrace(stale.stderr)).toBe(false);
    const disabled = await runFleetcron([
      'schedules',
      'disable',
      'acme/daily',
      '--by',
      'carol',
      '--note',
      'customer paused the contract',
      ...args,
    ]);
    expect(disabled.stdout.trim()).toBe('acme/daily disabled (version 3, by carol)');
    const [entry] = (await store.listAudit({ job: 'schedule:acme/daily', limit: 1 })).entries;
    expect(entry, 'the note reaches the audit log').toMatchObject({
      action: 'schedule.disable',
      by: 'carol',
      note: 'customer paused the contract',
      version: 3,
    });
    const get = await runFleetcron(['schedules', 'get', 'acme/daily', ...args]);
    expect(get.stdout).toMatch(/^enabled\s+false$/m);
    expect(get.stdout).toMatch(/^updated\s+\S+Z by carol$/m);
    const removed = await runFleetcron([
      'schedules',
      'remove',
      'acme/daily',
      '--expected-version',
      '3',
      ...args,
    ]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await store.getSchedule('acme/daily')).toBeNull();
    const gone = await runFleetcron(['schedules', 'get', 'acme/daily', ...args]);
    expect(gone.code).toBe(4);
  }, 60_000);

  it('bad input names the field and stores nothing; bad arguments are usage errors', async () => {
    const badCron = await runFleetcron([
      'schedules',
      'create',
      '--id',
      'x',
      '--handler',
      'h',
      '--cron',
      '61 * * * *',
      ...args,
    ]);
    expect(badCron.code).toBe(1);
    expect(badCron.stderr).toContain('trigger.expression');
    const badKey = await runFleetcron([
      'schedules',
      'create',
      '--id',
      'x',
      '--handler',
      'h',
      '--every',
      '60000',
      '--options',
      '{"leasMs":5000}',
      ...args,
    ]);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain('options.leasMs');
    expect(await store.getSchedule('x')).toBeNull();
    const noAction = await runFleetcron(['schedules', ...args]);
    expect(noAction.code).toBe(2);
    const twoTriggers = await runFleetcron([
      'schedules',
      'create',
      '--handler',
      'h',
      '--cron',
      '* * * * *',
      '--every',
      '1000',
      ...args,
    ]);
    expect(twoTriggers.code).toBe(2);
    expect(twoTriggers.stderr).toContain('give one trigger');
    const noVersion = await runFleetcron(['schedules', 'update', 'x', '--data', '1', ...args]);
    expect(noVersion.code).toBe(2);
    expect(noVersion.stderr).toContain('--expected-version');
  }, 60_000);

  it('pages with --limit and --cursor, filtered by --handler', async () => {
    for (const [i, handler] of ['a', 'b', 'a', 'a'].entries()) {
      await store.createSchedule(
        `p${i}`,
        {
          handler,
          trigger: { kind: 'every', ms: 60_000, anchor: 0 },
          data: null,
          enabled: true,
          options: {},
        },
        { by: 'seed' },
      );
    }
    const first = await runFleetcron([
      'schedules',
      'list',
      '--handler',
      'a',
      '--limit',
      '2',
      '--json',
      ...args,
    ]);
    const page = JSON.parse(first.stdout) as {
      schedules: Array<{ id: string }>;
      nextCursor: string;
    };
    expect(page.schedules.map((s) => s.id)).toEqual(['p0', 'p2']);
    const rest = await runFleetcron([
      'schedules',
      'list',
      '--handler',
      'a',
      '--limit',
      '2',
      '--cursor',
      page.nextCursor,
      '--json',
      ...args,
    ]);
    expect(
      (JSON.parse(rest.stdout) as { schedules: Array<{ id: string }> }).schedules.map((s) => s.id),
    ).toEqual(['p3']);
  }, 60_000);
});

describe('fleetcron schedules on Redis (every built-in store keeps schedules)', () => {
  it('create then list: the schedule is stored and listed, exit 0', async () => {
    const args = ['--redis', inject('fleetcronRedisUrl'), '--prefix', `cli-sched-${randomUUID()}`];
    const created = await runFleetcron([
      'schedules',
      'create',
      '--id',
      'acme/hourly',
      '--handler',
      'reports.hourly',
      '--cron',
      '0 * * * *',
      '--by',
      'alice',
      ...args,
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toBe('created acme/hourly (version 1, by alice)');
    const list = await runFleetcron(['schedules', 'list', ...args]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^acme\/hourly\s+reports\.hourly\s+cron 0 \* \* \* \*/m);
    expect(hasStackTrace(list.stderr)).toBe(false);
  });
});
