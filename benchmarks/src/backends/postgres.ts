import { PostgresElector, PostgresLock } from '@fleetcron/lock-postgres';
import { PostgresStore } from '@fleetcron/store-postgres';
import { startPostgres } from '@fleetcron/testkit';
import pg from 'pg';
import type { BackendModule, Claimer, Connection, OwnedLock } from './types.js';
import { fleetcronClaimer } from './types.js';

const SCHEMA = 'bench';

/** A pool whose connection errors are swallowed (a benchmark must never crash on them). */
function quietPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  return pool;
}

async function quietClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  return client;
}

const urlOf = (connection: Connection): string => {
  if (!connection.url) throw new Error('postgres connection without url');
  return connection.url;
};

/** The schema of the history store, beside the lock's. */
const storeSchema = (connection: Connection): string => `${connection.namespace}_store`;

/** `'text'` as a SQL literal (standard_conforming_strings is on). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/**
 * PostgreSQL: `PostgresLock` (one call of its claim function per claim) against the floor `INSERT … ON
 * CONFLICT DO NOTHING RETURNING` (+ owner-checked `DELETE` as release) and the peer
 * `pg_try_advisory_xact_lock` inside `BEGIN; …; COMMIT` sent as one simple-protocol round trip.
 */
export const postgresBackend: BackendModule = {
  name: 'postgres',
  floorName: 'INSERT … ON CONFLICT DO NOTHING RETURNING (+ owner-checked DELETE)',
  peerName: 'BEGIN; SELECT pg_try_advisory_xact_lock(hashtext(k)); COMMIT (one round trip)',
  async start() {
    const server = await startPostgres({ settings: { max_connections: 300 } });
    try {
      const url = await server.createDatabase('fleetcron_bench');
      const admin = quietPool(url, 1);
      try {
        await new PostgresLock(admin, { schema: SCHEMA }).migrate();
        await new PostgresElector(admin, { schema: SCHEMA }).migrate();
        await admin.query(
          `CREATE TABLE IF NOT EXISTS ${SCHEMA}.floor_claims (
             key text NOT NULL, fire_at bigint NOT NULL, owner text NOT NULL,
             PRIMARY KEY (key, fire_at))`,
        );
      } finally {
        await admin.end();
      }
      return {
        name: 'postgres',
        connection: { url, namespace: SCHEMA },
        version: server.version,
        strategy: server.strategy,
        close: () => server.close(),
      };
    } catch (error) {
      await server.close();
      throw error;
    }
  },
  async lock(connection, poolSize = 1): Promise<OwnedLock> {
    const pool = quietPool(urlOf(connection), poolSize);
    const lock = new PostgresLock(pool, { schema: connection.namespace });
    const elector = () => new PostgresElector(pool, { schema: connection.namespace });
    return { lock, elector, close: () => pool.end() };
  },
  store: {
    async prepare(connection) {
      const pool = quietPool(urlOf(connection), 1);
      try {
        await new PostgresStore(pool, { schema: storeSchema(connection) }).migrate();
      } finally {
        await pool.end();
      }
    },
    async open(connection, poolSize = 1) {
      const pool = quietPool(urlOf(connection), poolSize);
      return {
        store: new PostgresStore(pool, { schema: storeSchema(connection) }),
        close: () => pool.end(),
      };
    },
  },
  async claimer(connection, variant, owner): Promise<Claimer> {
    if (variant === 'fleetcron') return fleetcronClaimer(await this.lock(connection, 1), owner);
    const client = await quietClient(urlOf(connection));
    const close = () => client.end();
    if (variant === 'floor') {
      const table = `${connection.namespace}.floor_claims`;
      const insert = `INSERT INTO ${table} (key, fire_at, owner) VALUES ($1, $2, $3)
                      ON CONFLICT DO NOTHING RETURNING owner`;
      const remove = `DELETE FROM ${table} WHERE key = $1 AND fire_at = $2 AND owner = $3`;
      return {
        async claim(key, fireAt) {
          const values = [key, fireAt, owner];
          const { rowCount } = await client.query(insert, values);
          if (!rowCount) return { status: 'lost' };
          return { status: 'won', release: () => client.query(remove, values) };
        },
        close,
      };
    }
    return {
      async claim(key, fireAt) {
        const results = (await client.query(
          `BEGIN; SELECT pg_try_advisory_xact_lock(hashtext(${literal(`${key}:${fireAt}`)})) AS ok; COMMIT`,
        )) as unknown as pg.QueryResult<{ ok: boolean }>[];
        const ok = results[1]?.rows[0]?.ok === true;
        // The transaction-scoped lock is gone at COMMIT: nothing left to release.
        return ok ? { status: 'won', release: null } : { status: 'lost' };
      },
      close,
    };
  },
};
