import type { ElectorFixture } from '@fleetcron/conformance';
import { uniquePrefix } from '@fleetcron/testkit';
import pg from 'pg';
import { PostgresElector } from '../src/index.js';
import { testPool } from './fixture.js';

/**
 * Elector conformance fixtures on the database at `url()`: each fixture a fresh schema, each
 * `newElector()` a `PostgresElector` on its own bare `pg.Pool` (the elector attaches its own
 * 'error' listener).
 */
export function electorFixtures(url: () => Promise<string>): () => Promise<ElectorFixture> {
  return async () => {
    const dbUrl = await url();
    const schema = uniquePrefix('electpg');
    const admin = testPool(dbUrl, 2);
    await new PostgresElector(admin, { schema }).migrate();
    const pools: pg.Pool[] = [];
    let closed: Promise<void> | undefined;
    return {
      async newElector() {
        // the clock option is ignored on purpose: the database's now() judges
        const pool = new pg.Pool({ connectionString: dbUrl, max: 2 });
        pools.push(pool);
        return new PostgresElector(pool, { schema });
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
