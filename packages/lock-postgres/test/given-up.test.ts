import { type ClaimRequest, isFleetcronError } from '@fleetcron/core';
import { isolatedPostgres, waitFor } from '@fleetcron/testkit';
import type pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PostgresLock } from '../src/index.js';
import { lockFixtures, testPool } from './fixture.js';

// "A claim given up on" (README): a claim whose signal is aborted while it waits for a pooled
// connection is never sent, and a claim waiting for the key's row lock stops waiting when the
// client stops waiting for its answer. Either way it cannot take effect later, and another
// instance can still claim the fire.

let database: ReturnType<typeof isolatedPostgres> | undefined;
const databaseUrl = async () => {
  database ??= isolatedPostgres(inject('fleetcronPostgresUrl'));
  return (await database).url;
};
const pools: pg.Pool[] = [];
afterAll(async () => {
  for (const pool of pools.splice(0)) await pool.end();
  if (database) await (await database).drop();
});
const create = lockFixtures(databaseUrl);

const req = (fireAt: number, owner: string, signal?: AbortSignal): ClaimRequest => ({
  key: 'given-up',
  fireAt,
  owner,
  leaseMs: 30_000,
  exclusive: false,
  ...(signal ? { signal } : {}),
});

const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

function expectBackendUnavailable(outcome: { value: unknown } | { error: unknown }): void {
  expect(
    'error' in outcome && isFleetcronError(outcome.error, 'BACKEND_UNAVAILABLE'),
    `the given-up claim rejects with BackendUnavailableError, got ${JSON.stringify(outcome)}`,
  ).toBe(true);
}

describe('PostgresLock: a claim given up on never takes effect later', () => {
  it('is never sent once aborted while waiting for a pooled connection', async () => {
    const fixture = await create();
    try {
      const url = await databaseUrl();
      const pool = testPool(url, 1);
      pools.push(pool);
      const lock = new PostgresLock(pool, { schema: fixture.schema, statementTimeoutMs: 30_000 });
      const other = await fixture.newLock();
      const t = Date.now() - 1000;
      expect((await lock.claim(req(t, 'warm'))).status).toBe('won');

      const busy = await pool.connect(); // the pool's only connection
      const controller = new AbortController();
      const givenUp = settle(lock.claim(req(t + 1, 'me', controller.signal)));
      const kept = settle(lock.claim(req(t + 2, 'me')));
      await waitFor(() => pool.waitingCount === 2, { timeoutMs: 5_000, intervalMs: 5 });
      controller.abort();
      expectBackendUnavailable(await givenUp);
      busy.release();
      expect(await kept, 'the queued claim that was not given up on ran').toMatchObject({
        value: { status: 'won' },
      });
      const seen = await lock.inspect('given-up');
      expect(seen.fires.map((f) => f.fireAt)).not.toContain(t + 1);
      expect((await other.claim(req(t + 1, 'other'))).status).toBe('won');
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('stops waiting for the row lock when the client stops waiting for the answer', async () => {
    const fixture = await create();
    const url = await databaseUrl();
    const blocker = testPool(url, 1);
    pools.push(blocker);
    const conn = await blocker.connect();
    try {
      const lock = new PostgresLock(testPool(url, 2), {
        schema: fixture.schema,
        statementTimeoutMs: 1_000,
      });
      const other = await fixture.newLock();
      const t = Date.now() - 1000;
      expect((await lock.claim(req(t, 'warm'))).status).toBe('won');

      await conn.query('BEGIN');
      await conn.query(
        `SELECT 1 FROM "${fixture.schema}".fleetcron_keys WHERE key = 'given-up' FOR UPDATE`,
      );
      expectBackendUnavailable(await settle(lock.claim(req(t + 1, 'me'))));
      // The server-side wait ends too (lock_timeout), not only the client's.
      await waitFor(
        async () => {
          const { rows } = await fixture.admin.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%fleetcron_claim%'`,
          );
          return rows[0]?.n === '0';
        },
        { timeoutMs: 10_000, message: 'no claim left waiting for the row lock' },
      );
      await conn.query('COMMIT');
      expect((await other.claim(req(t + 1, 'other'))).status).toBe('won');
    } finally {
      await conn.query('ROLLBACK').catch(() => {});
      conn.release();
      await fixture.close();
    }
  }, 60_000);
});
