import { startEtcd } from '../etcd.js';
import { startPostgres } from '../postgres.js';
import { type RedisOptions, startRedis } from '../redis.js';
import type { EtcdServer, PostgresServer, RedisServer, ServerFaults } from '../types.js';

/**
 * Fixtures on a server of their own plus its fault controls: the shape of the conformance
 * suites' `faults` option (`LockFaults`, `ElectorFaults`).
 */
export interface DedicatedServer<F, S extends ServerFaults> {
  /** Makes a fixture on the dedicated server (the adapter's own fixture factory). */
  create(): Promise<F>;
  /** The server, with its fault controls (restart, pause, resume, dropConnections). */
  server: S;
  /** Tears the server down (the suites call it once, after their fault scenarios). */
  close(): Promise<void>;
}

/**
 * An adapter's fixture factory written as a function of the server's address getter (a URL, or
 * etcd's endpoints), so that one factory serves the shared server and a dedicated one.
 */
export type Fixtures<A, F> = (address: () => Promise<A>) => () => Promise<F>;

function dedicated<S extends ServerFaults, A, F>(
  start: () => Promise<S>,
  addressOf: (server: S) => A,
  fixtures: Fixtures<A, F>,
): () => Promise<DedicatedServer<F, S>> {
  return async () => {
    const server = await start();
    return {
      create: fixtures(async () => addressOf(server)),
      server,
      close: () => server.close(),
    };
  };
}

/**
 * The `faults` option of the conformance suites on PostgreSQL: a server of its own (never the
 * shared one: the fault scenarios restart it, pause it and drop its connections), started when
 * the fault scenarios begin, with the fixtures `fixtures(url)` makes on it.
 *
 * @example
 * runLockConformance({ name: 'postgres', create: lockFixtures(url), faults: dedicatedPostgres(lockFixtures) });
 */
export function dedicatedPostgres<F>(
  fixtures: Fixtures<string, F>,
): () => Promise<DedicatedServer<F, PostgresServer>> {
  return dedicated(
    () => startPostgres({ strategy: 'managed' }),
    (s) => s.url,
    fixtures,
  );
}

/** {@link dedicatedPostgres} for Redis; `options.appendOnly` for a server that keeps writes. */
export function dedicatedRedis<F>(
  fixtures: Fixtures<string, F>,
  options: Omit<RedisOptions, 'strategy'> = {},
): () => Promise<DedicatedServer<F, RedisServer>> {
  return dedicated(
    () => startRedis({ ...options, strategy: 'managed' }),
    (s) => s.url,
    fixtures,
  );
}

/**
 * {@link dedicatedPostgres} for etcd; fixtures get the server's client endpoints (etcd has no
 * way to drop connections on demand: its `dropConnections` restarts it).
 */
export function dedicatedEtcd<F>(
  fixtures: Fixtures<string[], F>,
): () => Promise<DedicatedServer<F, EtcdServer>> {
  return dedicated(
    () => startEtcd({ strategy: 'managed' }),
    (s) => s.endpoints,
    fixtures,
  );
}
