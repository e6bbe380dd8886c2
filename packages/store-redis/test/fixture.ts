import { randomUUID } from 'node:crypto';
import type { StoreFixture } from '@fleetcron/conformance';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { RedisStore, type RedisStoreOptions } from '../src/index.js';

/** A client on `url` with its own connection and an 'error' listener (never unhandled). */
export function newClient(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 3 });
  client.on('error', () => {});
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

/**
 * Conformance fixtures on the server at `url()` (shared or dedicated:
 * `@fleetcron/testkit/vitest`), made by {@link storeFixture}.
 */
export function storeFixtures(
  url: () => Promise<string>,
  options: Omit<RedisStoreOptions, 'prefix'> = {},
): () => Promise<StoreFixture> {
  return async () => storeFixture(await url(), options);
}

/** A conformance fixture: a fresh prefix on `url`; every newStore() gets its own client. */
export function storeFixture(
  url: string,
  options: Omit<RedisStoreOptions, 'prefix'> = {},
): StoreFixture & { prefix: string } {
  const prefix = uniquePrefix();
  const clients: Redis[] = [];
  return {
    prefix,
    async newStore() {
      const client = newClient(url);
      clients.push(client);
      return new RedisStore(client, { ...options, prefix });
    },
    async close() {
      for (const client of clients.splice(0)) client.disconnect();
    },
  };
}
