import { RedisLock } from '@fleetcron/lock-redis';
import { RedisStore } from '@fleetcron/store-redis';
import { startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import type { DemoBackend } from '../backends.js';

/**
 * Redis: a throwaway server from @fleetcron/testkit (or `FLEETCRON_TEST_REDIS_URL`), one ioredis
 * client shared by the demo's instances, `RedisLock` + `RedisStore` on it. Time is judged by the
 * Redis clock, so the demo's clock does not affect lease expiry or staleness.
 */
export async function openRedis(): Promise<DemoBackend> {
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
