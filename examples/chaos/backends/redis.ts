import { RedisLock } from '@fleetcron/lock-redis';
import { RedisStore } from '@fleetcron/store-redis';
import { startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { CHAOS_NAMESPACE, type ChaosBackend } from '../backends.js';
import { ALL_FAULTS } from '../faults.js';

function client(url: string): Redis {
  const created = new Redis(url);
  // reconnects by itself; an 'error' event must never crash an instance
  created.on('error', () => {});
  return created;
}

/**
 * Redis: a dedicated server from @fleetcron/testkit with `appendOnly` (claims survive the
 * restart fault, as a production Redis holding claims must be configured); each instance opens
 * its own ioredis client with `RedisLock` + `RedisStore` on it.
 */
export const backend: ChaosBackend = {
  faults: ALL_FAULTS,
  async startServer() {
    const server = await startRedis({ strategy: 'managed', appendOnly: true });
    return {
      address: server.url,
      restart: () => server.restart(),
      dropConnections: () => server.dropConnections(),
      async openStore() {
        const reader = client(server.url);
        return {
          store: new RedisStore(reader, { prefix: CHAOS_NAMESPACE }),
          close: async () => {
            reader.disconnect();
          },
        };
      },
      close: () => server.close(),
    };
  },
  async connect(address) {
    const redis = client(address);
    return {
      lock: new RedisLock(redis, { prefix: CHAOS_NAMESPACE }),
      store: new RedisStore(redis, { prefix: CHAOS_NAMESPACE }),
      close: async () => {
        redis.disconnect();
      },
    };
  },
};
