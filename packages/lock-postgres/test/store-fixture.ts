import type { StoreFixture } from '@fleetcron/conformance';
import { PostgresStore } from '@fleetcron/store-postgres';
import { uniquePrefix } from '@fleetcron/testkit';
import pg from 'pg';
import { testPool } from './fixture.js';
import type { PostgresProcessConfig } from './process-client.js';

/**
 * The store the fleet suite's store-on scenarios run with: each fixture a fresh schema of
 * `PostgresStore` tables, each `newStore()` on its own pool, and the same for a child process
 * (`processStore`).
 */
export function storeFixtures(url: () => Promise<string>): () => Promise<StoreFixture> {
  return async () => {
    const dbUrl = await url();
    const schema = uniquePrefix('fleetstore');
    const admin = testPool(dbUrl, 2);
    await new PostgresStore(admin, { schema }).migrate();
    const pools: pg.Pool[] = [];
    let closed: Promise<void> | undefined;
    return {
      processStore: {
        module: new URL('./process-client.ts', import.meta.url).href,
        exportName: 'openStore',
        config: { url: dbUrl, schema } satisfies PostgresProcessConfig,
      },
      async newStore() {
        const pool = new pg.Pool({ connectionString: dbUrl, max: 4 });
        pools.push(pool);
        return new PostgresStore(pool, { schema });
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
