import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname, userInfo } from 'node:os';
import { BackendUnavailableError, FleetClient, type Store } from '@fleetcron/core';
import { SINGLE_ATTEMPT } from '@fleetcron/etcd-shared/single-attempt';
import { UsageError } from './args.js';
import { SQLITE_URL_FORMS, sqlitePath } from './sqlite-url.js';

/** Which backend a URL names. */
export type BackendKind = 'postgres' | 'redis' | 'etcd' | 'sqlite';

/** A connected store with its fleet client; `close()` ends the clients the CLI made. */
export interface Backend {
  kind: BackendKind;
  url: string;
  store: Store;
  fleet: FleetClient;
  close(): Promise<void>;
}

/** Backend options of the command line. */
export interface BackendOptions {
  postgres?: string;
  redis?: string;
  etcd?: string;
  sqlite?: string;
  schema?: string;
  prefix?: string;
}

/** Every URL form `FLEETCRON_URL` accepts (the bad-URL message lists them all). */
export const ACCEPTED_URL_FORMS = `postgres://…, postgresql://…, redis://…, rediss://…, etcd://host:port, http://host:port or https://host:port (etcd), ${SQLITE_URL_FORMS}`;

/** The kind of a `FLEETCRON_URL` from its scheme. */
function kindOfUrl(url: string): BackendKind {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') return 'postgres';
  if (scheme === 'redis' || scheme === 'rediss') return 'redis';
  if (scheme === 'etcd' || scheme === 'http' || scheme === 'https') return 'etcd';
  if (scheme === 'sqlite') return 'sqlite';
  throw new UsageError(
    `FLEETCRON_URL ${JSON.stringify(url)} has no known scheme: use ${ACCEPTED_URL_FORMS}`,
  );
}

/** Picks the backend URL: exactly one of --postgres/--redis/--etcd/--sqlite, else FLEETCRON_URL. */
export function chooseBackend(
  options: BackendOptions,
  env: Record<string, string | undefined>,
): { kind: BackendKind; url: string } {
  const given = (['postgres', 'redis', 'etcd', 'sqlite'] as const).filter(
    (k) => options[k] !== undefined,
  );
  if (given.length > 1) throw new UsageError(`give one backend, got --${given.join(' and --')}`);
  const kind = given[0];
  const url = kind ? (options[kind] as string) : env.FLEETCRON_URL;
  if (url === undefined || url === '') {
    throw new UsageError(
      'no backend: pass --postgres URL, --redis URL, --etcd URL or --sqlite FILE, or set FLEETCRON_URL',
    );
  }
  const resolved = kind ?? kindOfUrl(url);
  if (resolved === 'sqlite') {
    sqlitePath(url); // throws a UsageError naming the two forms
    return { kind: resolved, url };
  }
  try {
    new URL(resolved === 'etcd' ? url.replace(/^etcd:/i, 'http:') : url);
  } catch {
    throw new UsageError(
      `--${resolved} ${JSON.stringify(url)} is not a URL (e.g. ${example(resolved)})`,
    );
  }
  return { kind: resolved, url };
}

function example(kind: BackendKind): string {
  if (kind === 'postgres') return 'postgres://user:pass@db:5432/app';
  if (kind === 'redis') return 'redis://cache:6379/0';
  return 'etcd://etcd:2379';
}

/** A URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** Default `by` of mutations: `cli:<user>@<host>`. */
export function defaultActor(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no user name on this system
  }
  return `cli:${user}@${hostname()}`;
}

/**
 * Connects to the backend and checks that it answers, so a wrong URL fails here with
 * `BackendUnavailableError` (exit 3) rather than later. `longLived` (for `serve`) keeps
 * reconnecting after failures instead of failing fast.
 */
export async function connectBackend(
  options: BackendOptions,
  env: Record<string, string | undefined>,
  longLived = false,
): Promise<Backend> {
  const { kind, url } = chooseBackend(options, env);
  if (kind === 'postgres') return connectPostgres(url, options, longLived);
  if (kind === 'redis') return connectRedis(url, options, longLived);
  if (kind === 'sqlite') return connectSqlite(url);
  return connectEtcd(url, options, longLived);
}

/**
 * Opens the fleet's SQLite file (the embedded default: `SqliteStore` of `@fleetcron/store-sqlite`)
 * on its own libsql connection, on this thread. The file must exist: a mistyped path is exit 3,
 * never a new empty database that shows no jobs.
 */
async function connectSqlite(url: string): Promise<Backend> {
  const path = sqlitePath(url);
  try {
    if (!statSync(path).isFile()) throw new Error('not a file');
  } catch (error) {
    const why =
      (error as { code?: string }).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new BackendUnavailableError(
      'sqlite',
      `opening ${path}`,
      new Error(`${why}; give the file the fleet's processes open (${SQLITE_URL_FORMS})`),
    );
  }
  const { SqliteStore, SqliteDriverError } = await import('@fleetcron/store-sqlite');
  let Database: typeof import('libsql');
  try {
    Database = createRequire(import.meta.url)('libsql');
  } catch (error) {
    throw new SqliteDriverError(
      `the SQLite driver libsql could not be loaded (${(error as Error).message}); reinstall @fleetcron/cli for this platform (npm install -g @fleetcron/cli).`,
      error,
    );
  }
  let db: InstanceType<typeof Database> | undefined;
  const close = async () => {
    db?.close();
  };
  try {
    db = new Database(path);
    const store = new SqliteStore(db);
    await store.open();
    return { kind: 'sqlite', url, store, fleet: new FleetClient({ store }), close };
  } catch (error) {
    await close();
    throw new BackendUnavailableError('sqlite', `opening ${path}`, error);
  }
}

/** Rejects with a timeout error when `promise` takes longer than `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function connectEtcd(
  url: string,
  options: BackendOptions,
  longLived: boolean,
): Promise<Backend> {
  const { Etcd3 } = await import('etcd3');
  const { EtcdStore } = await import('@fleetcron/store-etcd');
  const hosts = url.replace(/^etcd:/i, 'http:').split(',');
  // One-shot commands fail fast: etcd3's default retries and circuit breaker would wait seconds.
  const client = new Etcd3({
    hosts,
    dialTimeout: 5000,
    ...(longLived ? {} : { faultHandling: SINGLE_ATTEMPT }),
  });
  const close = async () => {
    client.close();
  };
  try {
    await within(client.get('fleetcron-cli-probe').string(), 5000);
    const store = new EtcdStore(
      client,
      options.prefix === undefined ? {} : { prefix: options.prefix },
    );
    return { kind: 'etcd', url, store, fleet: new FleetClient({ store }), close };
  } catch (error) {
    await close();
    throw new BackendUnavailableError('etcd', `connecting to ${redact(url)}`, error);
  }
}

async function connectPostgres(
  url: string,
  options: BackendOptions,
  longLived: boolean,
): Promise<Backend> {
  const { default: pg } = await import('pg');
  const { PostgresStore } = await import('@fleetcron/store-postgres');
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: 5000,
    max: longLived ? 5 : 2,
  });
  pool.on('error', () => {});
  const close = () => pool.end().catch(() => {});
  try {
    const client = await pool.connect();
    client.release();
    const store = new PostgresStore(
      pool,
      options.schema === undefined ? {} : { schema: options.schema },
    );
    return { kind: 'postgres', url, store, fleet: new FleetClient({ store }), close };
  } catch (error) {
    await close();
    throw new BackendUnavailableError('postgres', `connecting to ${redact(url)}`, error);
  }
}

async function connectRedis(
  url: string,
  options: BackendOptions,
  longLived: boolean,
): Promise<Backend> {
  const { Redis } = await import('ioredis');
  const { RedisStore } = await import('@fleetcron/store-redis');
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5000,
    ...(longLived ? {} : { maxRetriesPerRequest: 1, retryStrategy: () => null }),
  });
  client.on('error', () => {});
  const close = async () => {
    client.disconnect();
  };
  try {
    await client.connect();
    await client.ping();
    const store = new RedisStore(
      client,
      options.prefix === undefined ? {} : { prefix: options.prefix },
    );
    return { kind: 'redis', url, store, fleet: new FleetClient({ store }), close };
  } catch (error) {
    await close();
    throw new BackendUnavailableError('redis', `connecting to ${redact(url)}`, error);
  }
}
