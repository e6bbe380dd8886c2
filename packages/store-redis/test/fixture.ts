import { randomUUID } from 'node:crypto';
import type { StoreFixture } from '@fleetcron/conformance';
import { Redis, type RedisOptions } from 'ioredis';
import { inject } from 'vitest';
import { RedisStore, type RedisStoreOptions, scheduleKeys } from '../src/index.js';
import { scheduleWatchConnectionName } from '../src/redis-schedules.js';

/** A client on `url` with its own connection and an 'error' listener (never unhandled). */
export function newClient(url: string, options: RedisOptions = {}): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 3, ...options });
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

/**
 * A conformance fixture on the server at `url()` whose stores are made by `Store` (a mutant).
 * Its clients (and so their subscriber duplicates) reconnect 1 s after a drop, not ioredis's
 * 50 ms: a write made just after `dropPush` surely falls in the gap, so a mutant that never
 * resyncs surely misses it.
 */
export function mutantFixtures(
  url: () => Promise<string>,
  Store: typeof RedisStore,
): () => Promise<StoreFixture> {
  return async () => storeFixture(await url(), {}, Store, { retryStrategy: () => 1_000 });
}

/**
 * A conformance fixture: a fresh prefix on `url`; every newStore() gets its own client and is a
 * `Store` (default `RedisStore`; mutant tests pass a subclass). Stores are closed with it.
 */
export function storeFixture(
  url: string,
  options: Omit<RedisStoreOptions, 'prefix'> = {},
  Store: typeof RedisStore = RedisStore,
  clientOptions: RedisOptions = {},
): StoreFixture & { prefix: string; url: string } {
  const prefix = uniquePrefix();
  const clients: Redis[] = [];
  const stores: RedisStore[] = [];
  return {
    prefix,
    url,
    async newStore() {
      const client = newClient(url, clientOptions);
      clients.push(client);
      const store = new Store(client, { ...options, prefix });
      stores.push(store);
      return store;
    },
    async close() {
      for (const store of stores.splice(0)) await store.close();
      for (const client of clients.splice(0)) client.disconnect();
    },
  };
}

/**
 * Kills, with `CLIENT KILL ID`, the schedule subscriber connections of the stores under
 * `prefix` on the server at `url` (found by their connection name in `CLIENT LIST`); returns how
 * many were killed. Other tests' connections on a shared server are left alone.
 */
export async function killScheduleSubscribers(url: string, prefix: string): Promise<number> {
  const admin = newClient(url);
  try {
    const name = scheduleWatchConnectionName(scheduleKeys(prefix).channel);
    const list = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
    const ids = list
      .split('\n')
      .filter((line) => line.split(' ').includes(`name=${name}`))
      .map((line) => /(?:^| )id=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
    for (const id of ids) await admin.call('CLIENT', 'KILL', 'ID', id);
    return ids.length;
  } finally {
    admin.disconnect();
  }
}
