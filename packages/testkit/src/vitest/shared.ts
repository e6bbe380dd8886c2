import { inject } from 'vitest';
import { startEtcd } from '../etcd.js';
import { isolatedPostgres } from '../isolation.js';
import { startPostgres } from '../postgres.js';
// The typing of `inject('fleetcron...')` (also for the declaration build of this entry).
import type {} from '../provided-context.js';
import { startRedis } from '../redis.js';
import { perFile } from './per-file.js';

// The servers the functional tests of a file share. With the testkit's vitest global setup
// (`globalSetup: ['@fleetcron/testkit/global-setup']`) one server of each kind serves the whole
// run; without it each file starts its own on first use. Either way a fixture must still take a
// namespace of its own (a schema, a key prefix: `uniquePrefix()`), as the conformance suites
// require.

/**
 * The URL of a database of this test file's own: on the shared PostgreSQL server of the global
 * setup (`inject('fleetcronPostgresUrl')`), else on a server started for this file. Made on the
 * first call; dropped (and the file's own server closed) after the file.
 *
 * @example
 * const url = postgresDatabase();
 * runLockConformance({ name: 'postgres', create: lockFixtures(url) });
 */
export function postgresDatabase(): () => Promise<string> {
  const database = perFile(
    async () => {
      const shared = inject('fleetcronPostgresUrl');
      const own = shared ? undefined : await startPostgres();
      try {
        const db = await isolatedPostgres(shared ?? (own?.url as string));
        return { url: db.url, close: () => db.drop().finally(() => own?.close()) };
      } catch (error) {
        await own?.close();
        throw error;
      }
    },
    (db) => db.close(),
  );
  return async () => (await database()).url;
}

/**
 * The URL of the Redis server this file's functional tests share: the global setup's
 * (`inject('fleetcronRedisUrl')`), else one started for this file on the first call and closed
 * after it. Fixtures take a key prefix each (`uniquePrefix()`).
 */
export function redisUrl(): () => Promise<string> {
  const server = perFile(
    async () => {
      const shared = inject('fleetcronRedisUrl');
      if (shared) return { url: shared, close: async () => {} };
      const own = await startRedis();
      return { url: own.url, close: () => own.close() };
    },
    (s) => s.close(),
  );
  return async () => (await server()).url;
}

/**
 * The client endpoints of the etcd server this file's functional tests share: the global
 * setup's (`inject('fleetcronEtcdEndpoints')`), else one started for this file on the first call
 * and closed after it. Fixtures take a key prefix each.
 */
export function etcdEndpoints(): () => Promise<string[]> {
  const server = perFile(
    async () => {
      const shared = inject('fleetcronEtcdEndpoints');
      if (shared && shared.length > 0) return { endpoints: shared, close: async () => {} };
      const own = await startEtcd();
      return { endpoints: own.endpoints, close: () => own.close() };
    },
    (s) => s.close(),
  );
  return async () => (await server()).endpoints;
}
