// The lock behind a transaction-mode pooler: a real PgBouncer (pool_mode = transaction, 4 server
// connections) in front of a dedicated server. Every lock client goes through PgBouncer, so
// consecutive statements of one client run on different server connections: no session state.
import { runLockConformance } from '@fleetcron/conformance';
import {
  type PgBouncerServer,
  type PostgresServer,
  startPgBouncer,
  startPostgres,
} from '@fleetcron/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { lockFixtures, testPool } from './fixture.js';

let servers: Promise<{ server: PostgresServer; bouncer: PgBouncerServer }> | undefined;
/** The dedicated server and its PgBouncer, started once (lazily) for this file. */
function start(): Promise<{ server: PostgresServer; bouncer: PgBouncerServer }> {
  servers ??= (async () => {
    const server = await startPostgres({ strategy: 'managed' });
    try {
      return { server, bouncer: await startPgBouncer({ upstreamUrl: server.url }) };
    } catch (error) {
      await server.close();
      throw error;
    }
  })();
  return servers;
}
afterAll(async () => {
  if (!servers) return;
  const { server, bouncer } = await servers;
  await bouncer.close();
  await server.close();
}, 60_000);

const bouncerUrl = async () => (await start()).bouncer.url;

describe('pgbouncer in transaction pooling mode', () => {
  it('runs the statements of one pool client on more than one server backend', async () => {
    const pool = testPool(await bouncerUrl(), 1);
    const load = testPool(await bouncerUrl(), 8);
    try {
      const pids = new Set<number>();
      for (let round = 0; round < 20 && pids.size < 2; round++) {
        // Concurrent transactions from other clients take the 4 server connections in turn.
        const busy = Array.from({ length: 8 }, () => load.query('SELECT pg_sleep(0.01)'));
        const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        pids.add(Number(rows[0]?.pid));
        await Promise.all(busy);
      }
      expect(pids.size).toBeGreaterThan(1);
    } finally {
      await Promise.all([pool.end(), load.end()]);
    }
  }, 60_000);
});

runLockConformance({
  name: 'postgres via pgbouncer (transaction pooling)',
  create: lockFixtures(bouncerUrl),
  // Faults act on the postgres server behind PgBouncer (restart, dropped server connections, pause).
  faults: async () => {
    const { server } = await start();
    return { create: lockFixtures(bouncerUrl), server };
  },
});
