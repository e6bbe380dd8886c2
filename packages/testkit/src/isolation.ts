import { createDatabase, dropDatabase, uniqueDatabaseName } from './pg-admin.js';

/** A database of its own for one test file; see {@link isolatedPostgres}. */
export interface IsolatedPostgres {
  /** URL of the new database. */
  url: string;
  /** Its name. */
  database: string;
  /** Drops it (terminating its connections first). Idempotent. */
  drop(): Promise<void>;
}

/**
 * Creates a database of its own on the server of `url` (e.g. the shared server from
 * `inject('fleetcronPostgresUrl')`), so test files sharing one server do not see each other.
 * Needs the `pg` package.
 *
 * @example
 * let db: IsolatedPostgres;
 * beforeAll(async () => { db = await isolatedPostgres(inject('fleetcronPostgresUrl')); });
 * afterAll(() => db.drop());
 */
export async function isolatedPostgres(url: string, name?: string): Promise<IsolatedPostgres> {
  const database = name ?? uniqueDatabaseName();
  const dbUrl = await createDatabase(url, database);
  let dropped: Promise<void> | undefined;
  return {
    url: dbUrl,
    database,
    drop: () => {
      dropped ??= dropDatabase(url, database);
      return dropped;
    },
  };
}

let prefixCounter = 0;

/**
 * A name unique across processes and calls, for key prefixes (redis), etcd prefixes and SQL
 * identifiers (schemas): the sanitised label, pid, a counter and random letters joined by `_`,
 * e.g. `lock_redis_4242_3_k9x2a`. Only `[a-z0-9_]`, starts with a letter; append your own
 * separator (`:` or `/`).
 */
export function uniquePrefix(label = 'test'): string {
  prefixCounter += 1;
  let clean = label
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 24);
  if (!/^[a-z]/.test(clean)) clean = `t${clean}`;
  return `${clean}_${process.pid}_${prefixCounter}_${Math.random().toString(36).slice(2, 7)}`;
}
