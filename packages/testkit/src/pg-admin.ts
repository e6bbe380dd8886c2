import type { Client } from 'pg';

/** Opens a short-lived `pg` client (loaded lazily: `pg` is an optional peer dependency). */
export async function withPgClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  let mod: typeof import('pg');
  try {
    mod = await import('pg');
  } catch (error) {
    throw new Error(
      '@fleetcron/testkit: this postgres helper needs the `pg` package (npm i -D pg)',
      {
        cause: error,
      },
    );
  }
  const ClientClass = mod.Client ?? (mod as unknown as { default: typeof mod }).default.Client;
  const client = new ClientClass({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    query_timeout: 15_000,
  });
  client.on('error', () => {
    // a dropped admin connection is reported by the failing query instead
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Returns `url` with its database name replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;
let counter = 0;

/** A database name unique to this process: `t_<pid>_<n>_<random>`. */
export function uniqueDatabaseName(): string {
  counter += 1;
  return `t_${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Creates a database on the server of `url` and returns the URL of the new database. */
export async function createDatabase(url: string, name = uniqueDatabaseName()): Promise<string> {
  if (!IDENT.test(name)) {
    throw new Error(
      `createDatabase: invalid database name ${JSON.stringify(name)}: use lower-case letters, digits and _ (max 63)`,
    );
  }
  await withPgClient(url, (client) => client.query(`CREATE DATABASE "${name}"`));
  return withDatabase(url, name);
}

/** Drops a database, terminating its connections first (PostgreSQL 13+). */
export async function dropDatabase(url: string, name: string): Promise<void> {
  if (!IDENT.test(name))
    throw new Error(`dropDatabase: invalid database name ${JSON.stringify(name)}`);
  await withPgClient(url, (client) =>
    client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  );
}

/**
 * Terminates every other client backend and waits until they are gone, so that when this resolves
 * every previously open connection has been closed by the server.
 */
export async function terminateBackends(url: string): Promise<void> {
  await withPgClient(url, async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      `SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    );
    const pids = rows.map((r) => r.pid);
    // pg_terminate_backend only signals: wait until those backends are gone (new ones may appear).
    const deadline = Date.now() + 10_000;
    while (pids.length > 0 && Date.now() < deadline) {
      const left = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])',
        [pids],
      );
      if (Number(left.rows[0]?.n) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
}

/** `SHOW server_version` of the server, or `unknown`. */
export async function postgresVersion(url: string): Promise<string> {
  try {
    return await withPgClient(url, async (client) => {
      const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
      return /^(\d+(?:\.\d+)*)/.exec(rows[0]?.server_version ?? '')?.[1] ?? 'unknown';
    });
  } catch {
    return 'unknown';
  }
}
