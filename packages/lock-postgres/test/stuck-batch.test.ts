import { type ClaimRequest, isFleetcronError } from '@fleetcron/core';
import { isolatedPostgres, type StallLink, startStallLink, waitFor } from '@fleetcron/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PostgresLock } from '../src/index.js';

// Nothing hangs (#31 item 4): a batch claim that cannot be answered (its rows locked by another
// session, its server backend frozen, its network path stalled) fails closed with
// BackendUnavailableError within statementTimeoutMs, and the pool is left usable: a frozen or
// unreachable connection is destroyed, not kept as a pool slot.

const TIMEOUT_MS = 1500;
/** Slack for a loaded 2-core machine on top of the bound. */
const SLACK_MS = 3000;

let database: Awaited<ReturnType<typeof isolatedPostgres>>;
let admin: pg.Pool;
const pools: pg.Pool[] = [];
const links: StallLink[] = [];
const stopped: number[] = [];
const schema = 'stuck';

beforeAll(async () => {
  database = await isolatedPostgres(inject('fleetcronPostgresUrl'));
  admin = new pg.Pool({ connectionString: database.url, max: 2 });
  admin.on('error', () => {});
  await new PostgresLock(admin, { schema }).migrate();
}, 60_000);

afterAll(async () => {
  for (const pid of stopped) process.kill(pid, 'SIGCONT');
  for (const link of links) await link.close();
  await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
  await admin?.end();
  await database?.drop();
}, 60_000);

/** A lock on a pool of its own (bare: the lock attaches its listeners) to `url`. */
function newLock(url: string, max = 2): { lock: PostgresLock; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: url, max });
  pools.push(pool);
  return { lock: new PostgresLock(pool, { schema, statementTimeoutMs: TIMEOUT_MS }), pool };
}

const batch = (prefix: string, owner: string, n = 20): ClaimRequest[] => {
  const fireAt = Date.now() - 1000;
  return Array.from({ length: n }, (_, i) => ({
    key: `${prefix}-${i}`,
    fireAt,
    owner,
    leaseMs: 30_000,
    exclusive: false,
  }));
};

/** Runs `call`, expecting BackendUnavailableError within the bound; returns how long it took. */
async function expectBoundedFailure(what: string, call: () => Promise<unknown>): Promise<number> {
  const started = Date.now();
  const outcome = await call().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  const elapsed = Date.now() - started;
  expect(
    'error' in outcome && isFleetcronError(outcome.error, 'BACKEND_UNAVAILABLE'),
    `${what}: BackendUnavailableError expected, got ${'error' in outcome ? String(outcome.error) : JSON.stringify(outcome.value)}`,
  ).toBe(true);
  expect(elapsed, `${what} failed after ${elapsed} ms`).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(elapsed, `${what} failed after ${elapsed} ms`).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  return elapsed;
}

describe('PostgresLock: a stuck batch claim is bounded and fails closed', () => {
  it('rows locked by another session: claimMany fails within statementTimeoutMs, then wins', async () => {
    const { lock } = newLock(database.url);
    const requests = batch('held', 'me');
    // the keys' rows exist (an earlier fire of each, by another owner); from `requests` itself,
    // not a second batch(): a second Date.now() one ms later made the warm-up claim the very
    // fires of `requests` (CI at 201c01e: answered lost/claimed instead of failing)
    await lock.claimMany(requests.map((r) => ({ ...r, owner: 'warm', fireAt: r.fireAt - 1 })));
    const holder = await admin.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${schema}.fleetcron_keys WHERE key = $1 FOR UPDATE`, [
        'held-7',
      ]);
      await expectBoundedFailure('claimMany', () => lock.claimMany(requests));
      await expectBoundedFailure('claim', () => lock.claim(requests[7]!));
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const results = await lock.claimMany(requests);
    expect(results.map((r) => r.status)).toEqual(requests.map(() => 'won'));
  }, 60_000);

  it('its server backend frozen (SIGSTOP): claimMany fails within the bound; the next one runs on a fresh connection', async () => {
    const { lock, pool } = newLock(database.url, 1);
    const [row] = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    const pid = row!.pid;
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
    await expectBoundedFailure('claimMany', () => lock.claimMany(batch('frozen', 'me')));
    // The frozen backend is still stopped; the pool's only slot was freed for a new connection.
    const results = await lock.claimMany(batch('frozen-after', 'me'));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'won'));
    const [again] = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    expect(again!.pid).not.toBe(pid);
  }, 60_000);

  it('its network path stalled: every call fails within the bound and no stuck connection keeps a pool slot', async () => {
    const url = new URL(database.url);
    const link = await startStallLink({ port: Number(url.port) });
    links.push(link);
    url.port = String(link.port);
    const { lock, pool } = newLock(url.href, 2);
    expect((await lock.claimMany(batch('stall-warm', 'me'))).length).toBe(20);
    link.stall();
    // In flight on a pooled connection, then on new connections (the pool opens them while
    // stalled: their startup never answers).
    await expectBoundedFailure('claimMany on a pooled connection', () =>
      lock.claimMany(batch('stall', 'me')),
    );
    await Promise.all([
      expectBoundedFailure('claimMany on a new connection', () =>
        lock.claimMany(batch('stall-a', 'me')),
      ),
      expectBoundedFailure('claim on a new connection', () =>
        lock.claim(batch('stall-b', 'me')[0]!),
      ),
    ]);
    await waitFor(() => pool.totalCount === 0, {
      timeoutMs: TIMEOUT_MS + SLACK_MS,
      message: () => `pool slots freed while stalled (totalCount ${pool.totalCount})`,
    });
    link.flow();
    const results = await lock.claimMany(batch('stall-after', 'me'));
    expect(results.map((r) => r.status)).toEqual(results.map(() => 'won'));
  }, 60_000);
});
