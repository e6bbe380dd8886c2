import type { StoreFixture } from '@fleetcron/conformance';
import { uniquePrefix } from '@fleetcron/testkit';
import pg from 'pg';
import { PostgresStore, type PostgresStoreOptions } from '../src/index.js';

/** A pool whose idle-connection errors are ignored (tests must not crash). */
export function testPool(url: string, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  return pool;
}

/**
 * Makes conformance fixtures on the database at `url()`: each fixture is a fresh schema, each
 * `newStore()` a `PostgresStore` (or the subclass `Store`, for mutants) on its own `pg.Pool`.
 */
export function storeFixtures(
  url: () => Promise<string>,
  extra: Omit<PostgresStoreOptions, 'schema'> = {},
  Store: typeof PostgresStore = PostgresStore,
): () => Promise<StoreFixture & { schema: string; admin: pg.Pool }> {
  return async () => {
    const dbUrl = await url();
    const schema = uniquePrefix('storepg');
    const admin = testPool(dbUrl, 2);
    await new PostgresStore(admin, { schema }).migrate();
    const pools: pg.Pool[] = [];
    let closed: Promise<void> | undefined;
    return {
      schema,
      admin,
      async newStore() {
        // A bare pool (no 'error' listener): the store must attach its own.
        const pool = new pg.Pool({ connectionString: dbUrl, max: 4 });
        pools.push(pool);
        return new Store(pool, { ...extra, schema });
      },
      close() {
        closed ??= (async () => {
          await Promise.all(pools.map((p) => p.end()));
          await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
          await admin.end();
        })();
        return closed;
      },
    };
  };
}
