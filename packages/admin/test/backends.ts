import { randomUUID } from 'node:crypto';
import type { Store } from '@fleetcron/core';
import { EtcdStore } from '@fleetcron/store-etcd';
import { PostgresStore } from '@fleetcron/store-postgres';
import { RedisStore } from '@fleetcron/store-redis';
import type {} from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { inject } from 'vitest';

/** A store on a real server of the test run, in its own namespace; `close()` ends its client. */
export interface BackendFixture {
  store: Store;
  close(): Promise<void>;
}

/** The backends whose stores the admin API is tested on, each on the testkit's shared server. */
export const BACKENDS: Record<string, () => Promise<BackendFixture>> = {
  async postgres() {
    const url = inject('fleetcronPostgresUrl');
    if (!url)
      throw new Error('no shared PostgreSQL: vitest.config.ts must use the testkit global setup');
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('error', () => {});
    const store = new PostgresStore(pool, { schema: `admin_${randomUUID().slice(0, 8)}` });
    await store.migrate();
    return { store, close: () => pool.end() };
  },
  async redis() {
    const url = inject('fleetcronRedisUrl');
    if (!url)
      throw new Error('no shared Redis: vitest.config.ts must use the testkit global setup');
    const client = new Redis(url, { maxRetriesPerRequest: 3 });
    client.on('error', () => {});
    const store = new RedisStore(client, { prefix: `admin-${randomUUID()}` });
    return {
      store,
      close: async () => {
        client.disconnect();
      },
    };
  },
  async etcd() {
    const endpoints = inject('fleetcronEtcdEndpoints');
    if (!endpoints)
      throw new Error('no shared etcd: vitest.config.ts must use the testkit global setup');
    const client = new Etcd3({ hosts: endpoints });
    const store = new EtcdStore(client, { prefix: `admin/${randomUUID()}/` });
    return {
      store,
      close: async () => {
        await store.close();
        client.close();
      },
    };
  },
};
