import { type Execution, isFleetcronError } from '@fleetcron/core';
import { type StallLink, startStallLink, waitFor } from '@fleetcron/testkit';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';

// Nothing hangs (#31 item 4): a store write whose server backend is frozen or whose network path
// stalls fails with BackendUnavailableError within statementTimeoutMs, and leaves no stuck
// connection holding a pool slot.

const TIMEOUT_MS = 1500;
/** Slack for a loaded 2-core machine on top of the bound. */
const SLACK_MS = 3000;
const schema = 'stuck';

const databaseUrl = postgresDatabase();
const pools: pg.Pool[] = [];
const links: StallLink[] = [];
const stopped: number[] = [];
afterAll(async () => {
  for (const pid of stopped) process.kill(pid, 'SIGCONT');
  for (const link of links) await link.close();
  await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
}, 60_000);

async function newStore(
  url: string,
  max: number,
): Promise<{ store: PostgresStore; pool: pg.Pool }> {
  const pool = new pg.Pool({ connectionString: url, max });
  pools.push(pool);
  const store = new PostgresStore(pool, { schema, statementTimeoutMs: TIMEOUT_MS });
  await store.migrate();
  return { store, pool };
}

const execution = (id: string): Execution => ({
  id,
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
});

async function expectBoundedFailure(what: string, call: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  const outcome = await call().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  const elapsed = Date.now() - started;
  expect(
    'error' in outcome && isFleetcronError(outcome.error, 'BACKEND_UNAVAILABLE'),
    `${what}: BackendUnavailableError expected, got ${'error' in outcome ? String(outcome.error) : 'an answer'}`,
  ).toBe(true);
  expect(elapsed, `${what} failed after ${elapsed} ms`).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(elapsed, `${what} failed after ${elapsed} ms`).toBeLessThan(TIMEOUT_MS + SLACK_MS);
}

describe('PostgresStore: a stuck write is bounded', () => {
  it('its server backend frozen (SIGSTOP): recordMany fails within the bound; the next write runs on a fresh connection', async () => {
    const { store, pool } = await newStore(await databaseUrl(), 1);
    const [row] = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    process.kill(row!.pid, 'SIGSTOP');
    stopped.push(row!.pid);
    await expectBoundedFailure('recordMany', () =>
      store.recordMany([execution('frozen-1'), execution('frozen-2')]),
    );
    await store.record(execution('after'));
    expect((await store.history('job')).executions.map((e) => e.id)).toContain('after');
  }, 60_000);

  it('its network path stalled: writes fail within the bound and no stuck connection keeps a pool slot', async () => {
    const url = new URL(await databaseUrl());
    const link = await startStallLink({ port: Number(url.port) });
    links.push(link);
    url.port = String(link.port);
    const { store, pool } = await newStore(url.href, 2);
    link.stall();
    await expectBoundedFailure('record on a pooled connection', () =>
      store.record(execution('stalled-1')),
    );
    await Promise.all([
      expectBoundedFailure('recordMany on a new connection', () =>
        store.recordMany([execution('stalled-2')]),
      ),
      expectBoundedFailure('heartbeat on a new connection', () =>
        store.heartbeat({
          instanceId: 'i1',
          host: 'h',
          pid: 1,
          version: '0',
          startedAt: 1,
          heartbeatMs: 1000,
          clock: null,
          jobs: [],
        }),
      ),
    ]);
    await waitFor(() => pool.totalCount === 0, {
      timeoutMs: TIMEOUT_MS + SLACK_MS,
      message: () => `pool slots freed while stalled (totalCount ${pool.totalCount})`,
    });
    link.flow();
    await store.record(execution('after-stall'));
    expect((await store.history('job')).executions.map((e) => e.id)).toContain('after-stall');
  }, 60_000);
});
