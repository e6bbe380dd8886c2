import { isFleetcronError } from '@fleetcron/core';
import { isolatedPostgres } from '@fleetcron/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  assertPool,
  decodeText,
  encodeText,
  isConnectionError,
  PgRunner,
  preparedName,
  runMigration,
  StatementSet,
} from '../src/index.js';
import { TRICKY } from './strings.js';

const warnings: unknown[] = [];
const logger = {
  debug: () => {},
  info: () => {},
  warn: (_message: string, fields?: unknown) => warnings.push(fields),
  error: () => {},
};

const options = (preparedStatements: boolean) => ({
  statementTimeoutMs: 5000,
  preparedStatements,
  logger,
});

let database: Awaited<ReturnType<typeof isolatedPostgres>>;
let pool: pg.Pool;
let runner: PgRunner;

beforeAll(async () => {
  database = await isolatedPostgres(inject('fleetcronPostgresUrl'));
  // A bare pool: the runner must attach the pool 'error' listener itself.
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  runner = new PgRunner(pool, 'postgres', 5000, logger);
  await runMigration(
    runner,
    'CREATE TABLE IF NOT EXISTS texts (id int PRIMARY KEY, value text NOT NULL);',
  );
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

describe('PgRunner on a real server', () => {
  it('guards the pool against unhandled error events', () => {
    expect(pool.listenerCount('error')).toBe(1);
  });

  it('bounds a new connection of a pool that has no bound, and keeps a bound the pool has', () => {
    type WithOptions = { options: { connectionTimeoutMillis?: number } };
    expect((pool as unknown as WithOptions).options.connectionTimeoutMillis).toBe(5000);
    const own = new pg.Pool({ connectionString: database.url, connectionTimeoutMillis: 800 });
    new PgRunner(own, 'postgres', 5000, logger);
    expect((own as unknown as WithOptions).options.connectionTimeoutMillis).toBe(800);
  });

  it('stores encoded text in a text column and reads it back exactly', async () => {
    const statements = new StatementSet(pool, 'postgres', options(false), {
      put: 'INSERT INTO texts (id, value) VALUES ($1, $2)',
      get: 'SELECT value FROM texts WHERE id = $1',
    });
    expect(statements.statements.put.name).toBeUndefined();
    for (const [id, value] of TRICKY.entries()) {
      await statements.run('put', 'put', [id, encodeText(value)]);
      const [row] = await statements.run<{ value: string }>('get', 'get', [id]);
      expect(decodeText(row?.value ?? '<missing>')).toBe(value);
    }
  });

  it('names prepared statements by their text, and runs them', async () => {
    const text = 'SELECT $1::int + 1 AS n';
    const statements = new StatementSet(pool, 'postgres', options(true), { inc: text });
    expect(statements.statements.inc.name).toBe(preparedName('inc', text));
    expect(preparedName('inc', text)).toMatch(/^fleetcron_inc_[0-9a-f]{16}$/);
    expect(preparedName('inc', `${text} `)).not.toBe(preparedName('inc', text));
    for (const n of [1, 2, 3]) {
      const [row] = await statements.run<{ n: number }>('inc', 'inc', [n]);
      expect(row?.n).toBe(n + 1);
    }
  });

  it('runs migrations idempotently, also concurrently', async () => {
    const ddl = 'CREATE SCHEMA IF NOT EXISTS m; CREATE TABLE IF NOT EXISTS m.t (x int);';
    await Promise.all([runMigration(runner, ddl), runMigration(runner, ddl)]);
    await runMigration(runner, ddl);
    const rows = await runner.query<{ n: string }>(
      'check',
      "SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'm'",
      [],
    );
    expect(rows[0]?.n).toBe('1');
  });

  it('turns a statement error into BackendUnavailableError naming the operation', async () => {
    const error = await runner.query('broken', 'SELECT * FROM no_such_table', []).catch((e) => e);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toContain('broken');
    expect((error as { cause?: { code?: string } }).cause?.code).toBe('42P01');
  });

  it('gives up on a statement at the deadline', async () => {
    const fast = new PgRunner(pool, 'postgres', 300, logger);
    const error = await fast.query('sleep', 'SELECT pg_sleep(5)', []).catch((e) => e);
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    // The pool is still usable afterwards.
    const [row] = await runner.query<{ one: number }>('after', 'SELECT 1 AS one', []);
    expect(row?.one).toBe(1);
  });

  it('throws BackendUnavailableError when the server cannot be reached', async () => {
    const dead = new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none', max: 1 });
    try {
      const unreachable = new PgRunner(dead, 'postgres', 2000, logger);
      const error = await unreachable
        .query('ping', 'SELECT 1', [], { retry: true })
        .catch((e) => e);
      expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE')).toBe(true);
    } finally {
      await dead.end();
    }
  });
});

describe('isConnectionError', () => {
  it('retries socket errors and connection-class SQLSTATEs only', () => {
    expect(isConnectionError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('x'), { code: '08006' }))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('x'), { code: '57P01' }))).toBe(true);
    expect(isConnectionError(Object.assign(new Error('x'), { code: '42P01' }))).toBe(false);
    expect(isConnectionError(new Error('Query read timeout'))).toBe(false);
  });
});

describe('assertPool', () => {
  it('rejects anything but a pool with a typed error', () => {
    for (const value of [undefined, null, {}, 'postgres://x']) {
      let error: unknown;
      try {
        assertPool(value);
      } catch (e) {
        error = e;
      }
      expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    }
  });
});
