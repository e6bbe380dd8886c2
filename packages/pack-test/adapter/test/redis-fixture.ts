import type { LockFixture } from '@fleetcron/conformance';
import { RedisLock } from '@fleetcron/lock-redis';
import { uniquePrefix } from '@fleetcron/testkit';
import { Redis } from 'ioredis';

/**
 * Fixtures on the Redis server at `url()`: the file's shared server (`redisUrl()`) or a dedicated
 * one (`dedicatedRedis`). Each fixture is a key prefix of its own; each `newLock()` its own client.
 */
export function redisLockFixtures(url: () => Promise<string>): () => Promise<LockFixture> {
  return async () => {
    const address = await url();
    const prefix = uniquePrefix('example');
    const clients: Redis[] = [];
    return {
      async newLock(options = {}) {
        const client = new Redis(address, { maxRetriesPerRequest: 3 });
        client.on('error', () => {}); // the fault scenarios drop connections on purpose
        clients.push(client);
        return new RedisLock(client, { prefix, windowMs: options.windowMs });
      },
      async close() {
        for (const client of clients.splice(0)) client.disconnect();
      },
    };
  };
}
