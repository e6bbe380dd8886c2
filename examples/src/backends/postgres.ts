import { PostgresLock } from '@fleetcron/lock-postgres';
import { PostgresStore } from '@fleetcron/store-postgres';
import { startPostgres } from '@fleetcron/testkit';
import pg from 'pg';
import type { DemoBackend } from '../backends.js';

/**
 * PostgreSQL: a throwaway server from @fleetcron/testkit (or `FLEETCRON_TEST_POSTGRES_URL`), one
 * `pg.Pool` shared by the demo's instances, `PostgresLock` + `PostgresStore` in the schema
 * `fleetcron_demo` (created by `migrate()`). Time is judged by the database's `now()`, so the
 * demo's clock does not affect lease expiry or staleness.
 */
export async function openPostgres(): Promise<DemoBackend> {
  const server = await startPostgres();
  const pool = new pg.Pool({ connectionString: server.url, max: 10 });
  pool.on('error', (error: Error) => console.warn(`postgres: ${error.message}`));
  const lock = new PostgresLock(pool, { schema: 'fleetcron_demo' });
  const store = new PostgresStore(pool, { schema: 'fleetcron_demo' });
  try {
    await lock.migrate();
    await store.migrate();
  } catch (error) {
    await pool.end();
    await server.close();
    throw error;
  }
  return {
    lock,
    store,
    close: async () => {
      await pool.end();
      await server.close();
    },
  };
}
