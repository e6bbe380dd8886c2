import { isFleetcronError, type Lock } from '@fleetcron/core';
import { type PostgresServer, startPostgres } from '@fleetcron/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresLock } from '../src/index.js';

// Faults the conformance suite does not cover: a frozen server (SIGSTOP) must turn into a typed
// error within statementTimeoutMs, and idle pooled connections killed by the server must not
// crash the process. A dedicated server: this file freezes and breaks it.

let server: PostgresServer;
const pools: pg.Pool[] = [];
const caught: unknown[] = [];
const onCrash = (error: unknown) => caught.push(error);

beforeAll(async () => {
  server = await startPostgres({ strategy: 'managed' });
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
}, 60_000);

afterAll(async () => {
  await server?.resume();
  await Promise.all(pools.map((p) => p.end()));
  await server?.close();
  process.off('uncaughtException', onCrash);
  process.off('unhandledRejection', onCrash);
}, 60_000);

/** A lock on a bare pool (no 'error' listener of ours: the lock attaches one). */
async function newLock(statementTimeoutMs: number): Promise<Lock> {
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  pools.push(pool);
  const lock = new PostgresLock(pool, { schema: 'faults', statementTimeoutMs });
  await lock.migrate();
  return lock;
}

/** Claims until the server answers again (typed errors meanwhile). */
async function claimUntilAnswered(lock: Lock, key: string, owner: string): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (let fireAt = Date.now(); Date.now() < deadline; fireAt++) {
    try {
      const result = await lock.claim({ key, fireAt, owner, leaseMs: 1000, exclusive: false });
      return result.status;
    } catch (error) {
      expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
    }
  }
  throw new Error('the server did not answer within 30 s');
}

describe('PostgresLock faults', () => {
  it('a frozen server: claim, extend and inspect throw BackendUnavailableError within statementTimeoutMs', async () => {
    const timeoutMs = 1500;
    const lock = await newLock(timeoutMs);
    const held = await lock.claim({
      key: 'frozen',
      fireAt: Date.now(),
      owner: 'a',
      leaseMs: 60_000,
      exclusive: true,
    });
    if (held.status !== 'won') throw new Error(`expected won, got ${held.status}`);
    const fresh = await newLock(timeoutMs); // its pool has an idle connection too
    await server.pause();
    try {
      const operations: [string, () => Promise<unknown>][] = [
        [
          'claim',
          () =>
            lock.claim({
              key: 'frozen',
              fireAt: Date.now() + 1,
              owner: 'b',
              leaseMs: 1000,
              exclusive: true,
            }),
        ],
        ['extend', () => lock.extend(held.lease, 60_000)],
        ['inspect', () => fresh.inspect('frozen')],
      ];
      for (const [name, operation] of operations) {
        const started = Date.now();
        const error = await operation().then(
          () => null,
          (e: unknown) => e,
        );
        const elapsed = Date.now() - started;
        expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), `${name}: ${String(error)}`).toBe(
          true,
        );
        expect(elapsed, `${name} gave up after ${elapsed} ms`).toBeGreaterThanOrEqual(
          timeoutMs - 50,
        );
        expect(elapsed, `${name} gave up after ${elapsed} ms`).toBeLessThan(timeoutMs + 3000);
      }
    } finally {
      await server.resume();
    }
    // Both clients recover by themselves; the lease held before the freeze is still there.
    expect(await claimUntilAnswered(fresh, 'after-freeze', 'b')).toBe('won');
    expect((await fresh.inspect('frozen')).leases.map((l) => l.token)).toEqual([held.lease.token]);
    expect(await lock.release(held.lease)).toBe(true);
    expect(caught).toEqual([]);
  }, 60_000);

  it('idle pooled connections killed by the server: no crash, the next claim works', async () => {
    const lock = await newLock(5000);
    // Fill the pool with idle connections, then kill them from the server side.
    await Promise.all([lock.inspect('x'), lock.inspect('y')]);
    await server.dropConnections();
    // The pool emits 'error' for each killed idle client: handled by the lock's listener.
    expect(await claimUntilAnswered(lock, 'after-drop', 'a')).toBe('won');
    await server.restart();
    expect(await claimUntilAnswered(lock, 'after-restart', 'a')).toBe('won');
    expect(caught).toEqual([]);
  }, 60_000);

  it('connections killed while claims are in flight (also right after they opened): typed errors or answers, no crash', async () => {
    // pg-pool hands out a new connection and removes its own 'error' listener in the same
    // network read that may also carry the server's "terminating connection" error: the lock
    // must have its listener on the client before that read ends.
    const pools = [
      new pg.Pool({ connectionString: server.url, max: 4 }),
      new pg.Pool({ connectionString: server.url, max: 4 }),
    ];
    try {
      const [a, b] = pools.map((pool) => new PostgresLock(pool, { schema: 'faults' }));
      await a!.migrate();
      for (let round = 0; round < 5; round++) {
        const t = Date.now() - 60_000 + round * 100;
        const inFlight = Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a! : b!)
            .claim({
              key: 'in-flight',
              fireAt: t + i,
              owner: `o${i}`,
              leaseMs: 20_000,
              exclusive: false,
            })
            .then(
              (r) => r.status,
              (e: unknown) => e,
            ),
        );
        await server.dropConnections();
        for (const outcome of await Promise.all(inFlight)) {
          if (typeof outcome === 'string') expect(outcome).toBe('won');
          else expect(isFleetcronError(outcome, 'BACKEND_UNAVAILABLE'), String(outcome)).toBe(true);
        }
      }
      expect(await claimUntilAnswered(a!, 'in-flight-after', 'a')).toBe('won');
      expect(caught).toEqual([]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  }, 60_000);
});
