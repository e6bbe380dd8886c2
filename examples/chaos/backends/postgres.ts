import { PostgresLock } from '@fleetcron/lock-postgres';
import { PostgresStore } from '@fleetcron/store-postgres';
import { startPostgres } from '@fleetcron/testkit';
import pg from 'pg';
import { CHAOS_NAMESPACE, type ChaosBackend } from '../backends.js';
import { ALL_FAULTS } from '../faults.js';

function pool(url: string): pg.Pool {
  const created = new pg.Pool({ connectionString: url, max: 10 });
  // a dropped connection or a restarting server must never crash an instance
  created.on('error', () => {});
  return created;
}

/**
 * PostgreSQL: a dedicated server from @fleetcron/testkit; the driver migrates the schema once,
 * each instance opens its own `pg.Pool` with `PostgresLock` + `PostgresStore` on it.
 */
export const backend: ChaosBackend = {
  faults: ALL_FAULTS,
  async startServer() {
    const server = await startPostgres({ strategy: 'managed' });
    const admin = pool(server.url);
    try {
      await new PostgresLock(admin, { schema: CHAOS_NAMESPACE }).migrate();
      await new PostgresStore(admin, { schema: CHAOS_NAMESPACE }).migrate();
    } finally {
      await admin.end();
    }
    return {
      address: server.url,
      restart: () => server.restart(),
      dropConnections: () => server.dropConnections(),
      async openStore() {
        const reader = pool(server.url);
        return {
          store: new PostgresStore(reader, { schema: CHAOS_NAMESPACE }),
          close: () => reader.end(),
        };
      },
      close: () => server.close(),
    };
  },
  async connect(address) {
    const client = pool(address);
    return {
      lock: new PostgresLock(client, { schema: CHAOS_NAMESPACE }),
      store: new PostgresStore(client, { schema: CHAOS_NAMESPACE }),
      close: () => client.end(),
    };
  },
};
