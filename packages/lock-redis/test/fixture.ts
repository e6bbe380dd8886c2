import { randomUUID } from 'node:crypto';
import type { LockFixture, NewLockOptions } from '@fleetcron/conformance';
import { type RedisCluster, type RedisServer, startRedis } from '@fleetcron/testkit';
import { Cluster, Redis } from 'ioredis';
import { inject } from 'vitest';
import { RedisElector, RedisLock, type RedisLockOptions } from '../src/index.js';
import type { RedisProcessConfig } from './process-client.js';

/** Every 'error' event a test client emitted (tests attach this listener to every client). */
export const clientErrors: Error[] = [];

/** A client on `url` with its own connection and an 'error' listener (never unhandled). */
export function newClient(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 3 });
  client.on('error', (error: Error) => clientErrors.push(error));
  return client;
}

/** A unique key prefix: one namespace per fixture on a shared server. */
export const uniquePrefix = (): string => `t-${randomUUID()}`;

/** The shared server of the test run (testkit global setup), for functional tests. */
export function sharedUrl(): string {
  const url = inject('fleetcronRedisUrl');
  if (!url) throw new Error('no shared redis: vitest.config.ts must use the testkit global setup');
  return url;
}

/** Starts one dedicated server lazily and shares it between the fixtures of a test file. */
export function dedicatedServer(options: { appendOnly?: boolean } = {}): {
  get(): Promise<RedisServer>;
  close(): Promise<void>;
} {
  let server: Promise<RedisServer> | undefined;
  return {
    get: () => {
      server ??= startRedis({ strategy: 'managed', ...options });
      return server;
    },
    close: async () => {
      if (server) await (await server).close();
    },
  };
}

/**
 * Conformance fixtures on the server at `url()` (shared or dedicated: `@fleetcron/testkit/vitest`),
 * made by {@link lockFixture}.
 */
export function lockFixtures(
  url: () => Promise<string>,
  options: Omit<RedisLockOptions, 'prefix' | 'windowMs'> = {},
): () => Promise<LockFixture> {
  return async () => lockFixture(await url(), options);
}

/**
 * A conformance fixture: a fresh prefix on `url`; every newLock() (and newElector()) gets its
 * own client.
 */
export async function lockFixture(
  url: string,
  options: Omit<RedisLockOptions, 'prefix' | 'windowMs'> = {},
): Promise<LockFixture & { clients: Redis[]; prefix: string }> {
  const prefix = uniquePrefix();
  const clients: Redis[] = [];
  const admin = newClient(url);
  clients.push(admin);
  return {
    prefix,
    clients,
    processLock: {
      module: new URL('./process-client.ts', import.meta.url).href,
      exportName: 'openLock',
      config: { url, prefix, lock: options } satisfies RedisProcessConfig,
    },
    async newLock(opts: NewLockOptions = {}) {
      // opts.clock is ignored on purpose: the Redis clock judges time (capabilities.clock 'backend').
      const client = newClient(url);
      clients.push(client);
      return new RedisLock(client, { ...options, prefix, windowMs: opts.windowMs });
    },
    async newElector() {
      // the clock option is ignored on purpose: the Redis clock judges (capabilities.clock 'backend')
      const client = newClient(url);
      clients.push(client);
      return new RedisElector(client, { prefix, durable: options.durable });
    },
    probe: {
      async claimRecordCount() {
        let count = 0;
        let cursor = '0';
        do {
          const [next, keys] = await admin.scan(
            cursor,
            'MATCH',
            `{${prefix}:*}:f:*`,
            'COUNT',
            1000,
          );
          cursor = next;
          count += keys.length;
        } while (cursor !== '0');
        return count;
      },
    },
    async close() {
      for (const client of clients.splice(0)) client.disconnect();
    },
  };
}

/**
 * Conformance fixtures on a Redis Cluster: a fresh prefix per fixture, every `newLock()` its own
 * `Cluster` client (disconnected by `close()`, and by `cluster.close()` at the latest).
 */
export function clusterLockFixtures(
  cluster: () => Promise<RedisCluster>,
): () => Promise<LockFixture> {
  return async () => {
    const running = await cluster();
    const prefix = uniquePrefix();
    const clients: Cluster[] = [];
    return {
      async newLock(options = {}) {
        const client = running.track(new Cluster([...running.nodes])).on('error', () => {});
        clients.push(client);
        return new RedisLock(client, { prefix, windowMs: options.windowMs });
      },
      async close() {
        for (const client of clients.splice(0)) client.disconnect();
      },
    };
  };
}
