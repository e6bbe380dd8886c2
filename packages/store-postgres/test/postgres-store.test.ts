import { type Execution, isFleetcronError } from '@fleetcron/core';
import { type PostgresServer, startPostgres } from '@fleetcron/testkit';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore, postgresStoreSchema } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// What the conformance suite does not cover: options, the schema, U+0000 in text, the history
// index, and a frozen server.

const databaseUrl = postgresDatabase();
const create = storeFixtures(databaseUrl);

const bare = () => new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none', max: 1 });

function execution(overrides: Partial<Execution> = {}): Execution {
  return {
    id: 'e1',
    job: 'job',
    fireAt: 1_000,
    status: 'succeeded',
    attempt: 1,
    instanceId: 'i1',
    token: 1,
    startedAt: 1_005,
    finishedAt: 1_050,
    error: null,
    reason: null,
    ...overrides,
  };
}

describe('PostgresStore options', () => {
  it.each([
    ['schema', { schema: 'a b' }],
    ['table', { table: 't'.repeat(51) }],
    ['maxErrorLength', { maxErrorLength: 0 }],
    ['maxErrorLength', { maxErrorLength: 2.5 }],
    ['statementTimeoutMs', { statementTimeoutMs: 0 }],
  ])('rejects a bad %s at construction with a typed error naming it', (field, options) => {
    let error: unknown;
    try {
      new PostgresStore(bare(), options);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field?: string }).field).toBe(field);
  });

  it('attaches an error listener to a pool that has none', () => {
    const pool = bare();
    new PostgresStore(pool);
    expect(pool.listenerCount('error')).toBe(1);
    expect(() => pool.emit('error', new Error('idle client died'))).not.toThrow();
  });

  it('exports the schema as idempotent SQL with the history index', () => {
    const sql = postgresStoreSchema({ schema: 'ops', table: 'cron' });
    expect(sql).toContain('CREATE SCHEMA IF NOT EXISTS "ops"');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "ops"."cron_executions"');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "ops"."cron_jobs"');
    expect(sql).toContain('(job, started_at DESC, id DESC)');
  });
});

describe('PostgresStore on PostgreSQL', () => {
  it('text with U+0000, backslashes or the escape marker round-trips exactly', async () => {
    const fixture = await create();
    try {
      const store = await fixture.newStore();
      const odd = ['a\0b', 'a\\0b', '\uFFFFa', '\0', 'C:\\temp\\x'];
      for (const [i, text] of odd.entries()) {
        const e = execution({
          id: `id-${text}`,
          job: `job-${text}`,
          instanceId: `instance-${text}`,
          error: `Error: ${text}`,
          reason: `reason-${text}`,
          requestedBy: `by-${text}`,
          status: 'failed',
          startedAt: 1_000 + i,
        });
        await store.record(e);
        const [stored] = (await store.history(e.job)).executions;
        expect(stored, JSON.stringify(text)).toEqual(e);
        expect((await store.getJobState(e.job)).lastStatus).toBe('failed');
      }
      // Plain text is stored as it is: readable in SQL.
      const { rows } = await fixture.admin.query<{ error: string }>(
        `SELECT error FROM "${fixture.schema}".fleetcron_executions WHERE job = 'job-C:\\temp\\x'`,
      );
      expect(rows.map((r) => r.error)).toEqual(['Error: C:\\temp\\x']);
    } finally {
      await fixture.close();
    }
  });

  it('migrate() is idempotent, also when instances run it at once', async () => {
    const fixture = await create();
    try {
      const url = await databaseUrl();
      const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url, max: 1 }));
      try {
        const schema = `${fixture.schema}_m`;
        await Promise.all(pools.map((pool) => new PostgresStore(pool, { schema }).migrate()));
        await new PostgresStore(pools[0]!, { schema }).migrate();
        await new PostgresStore(pools[0]!, { schema }).record(execution());
        await pools[0]!.query(`DROP SCHEMA "${schema}" CASCADE`);
      } finally {
        await Promise.all(pools.map((p) => p.end()));
      }
    } finally {
      await fixture.close();
    }
  });

  it("migrate() lets a table made before 'aborted' existed accept it, and changes nothing after", async () => {
    const fixture = await create();
    try {
      const schema = `${fixture.schema}_old`;
      const old = postgresStoreSchema({ schema })
        .replace(/DO \$fleetcron\$[\s\S]*?\$fleetcron\$;\n/, '')
        .replace(", 'aborted'", '');
      expect(old, 'the older DDL has no aborted status').not.toContain('aborted');
      await fixture.admin.query(old);
      const store = new PostgresStore(fixture.admin, { schema });
      const aborted = execution({ id: 'a1', status: 'aborted' });
      await expect(store.record(aborted), 'the older table rejects aborted').rejects.toThrow();
      await store.migrate();
      await store.record(aborted);
      expect((await store.getJobState('job')).lastStatus).toBe('aborted');
      const checks = async () =>
        (
          await fixture.admin.query<{ oid: string }>(
            `SELECT oid FROM pg_constraint WHERE conrelid = '"${schema}".fleetcron_executions'::regclass AND contype = 'c'`,
          )
        ).rows.map((r) => r.oid);
      const before = await checks();
      expect(before, 'one status check').toHaveLength(1);
      await store.migrate();
      expect(await checks(), 'a second migrate() leaves the check as it is').toEqual(before);
      await fixture.admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    } finally {
      await fixture.close();
    }
  });

  it('history pages come from the (job, started_at DESC, id DESC) index', async () => {
    const fixture = await create();
    try {
      const client = await fixture.admin.connect();
      try {
        // Planner choice on a tiny table: forbid the sequential scan to see the index is usable.
        await client.query('SET enable_seqscan = off');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM "${fixture.schema}".fleetcron_executions
           WHERE job = 'j' AND (started_at, id) < (5, 'x') ORDER BY started_at DESC, id DESC LIMIT 11`,
        );
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan).toContain('fleetcron_exec_history');
        expect(plan).not.toContain('Sort');
      } finally {
        await client.query('RESET enable_seqscan');
        client.release();
      }
    } finally {
      await fixture.close();
    }
  });
});

describe('PostgresStore faults', () => {
  let server: PostgresServer | undefined;
  afterAll(async () => {
    await server?.resume();
    await server?.close();
  }, 60_000);

  it('a frozen server: record and history throw BackendUnavailableError within statementTimeoutMs', async () => {
    server = await startPostgres({ strategy: 'managed' });
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    try {
      const timeoutMs = 1500;
      const store = new PostgresStore(pool, { statementTimeoutMs: timeoutMs });
      await store.migrate();
      await store.record(execution());
      await server.pause();
      try {
        for (const [name, operation] of [
          ['record', () => store.record(execution({ id: 'e2' }))],
          ['history', () => store.history('job')],
        ] as const) {
          const started = Date.now();
          const error = await (operation() as Promise<unknown>).then(
            () => null,
            (e: unknown) => e,
          );
          const elapsed = Date.now() - started;
          expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), `${name}: ${String(error)}`).toBe(
            true,
          );
          expect(elapsed, `${name} gave up after ${elapsed} ms`).toBeLessThan(timeoutMs + 3000);
        }
      } finally {
        await server.resume();
      }
      // Recovers by itself once the server answers.
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          expect((await store.history('job')).executions.length).toBeGreaterThanOrEqual(1);
          break;
        } catch (error) {
          expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
          if (Date.now() > deadline) throw error;
        }
      }
    } finally {
      await pool.end();
    }
  }, 90_000);
});
