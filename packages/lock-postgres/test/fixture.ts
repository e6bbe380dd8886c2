import type { LockFixture, LockProbe, NewLockOptions } from '@fleetcron/conformance';
import { uniquePrefix } from '@fleetcron/testkit';
import pg from 'pg';
import { PostgresElector, PostgresLock, type PostgresLockOptions } from '../src/index.js';
import type { PostgresProcessConfig } from './process-client.js';

/** A pool whose idle-connection errors are recorded, never thrown (tests must not crash). */
export function testPool(url: string, max = 4): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  return pool;
}

/**
 * Makes conformance fixtures on the database at `url()`: each fixture is a fresh schema, each
 * `newLock()` a `PostgresLock` (each `newElector()` a `PostgresElector`, its tables made on the
 * first call) on its own `pg.Pool`.
 */
export function lockFixtures(
  url: () => Promise<string>,
  extra: Omit<PostgresLockOptions, 'schema' | 'windowMs'> = {},
): () => Promise<LockFixture & { schema: string; admin: pg.Pool; probe: LockProbe }> {
  return async () => {
    const dbUrl = await url();
    const schema = uniquePrefix('lockpg');
    const admin = testPool(dbUrl, 2);
    await new PostgresLock(admin, { schema }).migrate();
    const pools: pg.Pool[] = [];
    let closed: Promise<void> | undefined;
    let electorTables: Promise<void> | undefined;
    /** A bare pool (no 'error' listener): the lock or elector must attach its own. */
    const ownPool = () => {
      const pool = new pg.Pool({ connectionString: dbUrl, max: 4 });
      pools.push(pool);
      return pool;
    };
    return {
      schema,
      admin,
      processLock: {
        module: new URL('./process-client.ts', import.meta.url).href,
        exportName: 'openLock',
        config: { url: dbUrl, schema, lock: extra } satisfies PostgresProcessConfig,
      },
      async newLock(options: NewLockOptions = {}) {
        return new PostgresLock(ownPool(), { ...extra, schema, windowMs: options.windowMs });
      },
      async newElector() {
        // the clock option is ignored on purpose: the database's now() judges
        electorTables ??= new PostgresElector(admin, { schema }).migrate();
        await electorTables;
        return new PostgresElector(ownPool(), { schema });
      },
      probe: {
        async claimRecordCount() {
          const { rows } = await admin.query<{ n: string }>(
            `SELECT count(*) AS n FROM "${schema}".fleetcron_claims`,
          );
          return Number(rows[0]?.n);
        },
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
