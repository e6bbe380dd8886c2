import { type Clock, type Lock, MemoryLock, MemoryStore, type Store } from '@fleetcron/core';
import { EtcdLock } from '@fleetcron/lock-etcd';
import { RedisLock } from '@fleetcron/lock-redis';
import { RedisStore } from '@fleetcron/store-redis';
import { startEtcd, startRedis } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';

/** Backend names the demo accepts on `--backend`. */
export const BACKEND_NAMES = ['memory', 'postgres', 'redis', 'etcd'] as const;

/** A backend name. */
export type BackendName = (typeof BACKEND_NAMES)[number];

/** What a demo backend provides: one Lock (and optionally a Store) shared by every instance. */
export interface DemoBackend {
  lock: Lock;
  store?: Store;
  /** Closes what `openBackend` created (clients, servers). */
  close(): Promise<void>;
}

/**
 * Maps a backend name to a ready Lock (+ Store). Adapter authors: add your case here, build the
 * client (and a throwaway server from @fleetcron/testkit if you like) and return it with `close`.
 */
export async function openBackend(name: string, options: { clock: Clock }): Promise<DemoBackend> {
  switch (name) {
    case 'memory':
      // one in-process lock shared by the three simulated instances
      return {
        lock: new MemoryLock({ clock: options.clock }),
        store: new MemoryStore(),
        close: async () => {},
      };
    case 'redis':
      return openRedis();
    case 'etcd':
      return openEtcd(options.clock);
    case 'postgres':
      throw new Error(
        `backend "${name}" is not yet available in the demo: wire its adapter in examples/src/backends.ts. Use --backend memory.`,
      );
    default:
      throw new Error(
        `unknown backend "${name}": use one of ${BACKEND_NAMES.join(', ')} (--backend memory).`,
      );
  }
}

/**
 * Redis: a throwaway server from @fleetcron/testkit (or `FLEETCRON_TEST_REDIS_URL`), one ioredis
 * client shared by the demo's instances, `RedisLock` + `RedisStore` on it. Time is judged by the
 * Redis clock, so the demo's clock does not affect lease expiry or staleness.
 */
async function openRedis(): Promise<DemoBackend> {
  const server = await startRedis();
  const client = new Redis(server.url);
  client.on('error', (error: Error) => console.warn(`redis: ${error.message}`));
  return {
    lock: new RedisLock(client, { prefix: 'fleetcron-demo' }),
    store: new RedisStore(client, { prefix: 'fleetcron-demo' }),
    close: async () => {
      client.disconnect();
      await server.close();
    },
  };
}

/**
 * etcd: a throwaway server from @fleetcron/testkit (or `FLEETCRON_TEST_ETCD_ENDPOINTS`), one
 * Etcd3 client, `EtcdLock` on it; no store (history belongs in PostgreSQL or Redis, see the
 * lock-etcd README). etcd cannot read a clock in a transaction, so the demo's clock judges
 * staleness; lease expiry is judged by the etcd server.
 */
async function openEtcd(clock: Clock): Promise<DemoBackend> {
  const server = await startEtcd();
  const client = new Etcd3({ hosts: server.endpoints });
  const lock = new EtcdLock(client, { prefix: 'fleetcron-demo/', clock });
  return {
    lock,
    close: async () => {
      await lock.close();
      client.close();
      await server.close();
    },
  };
}
