import type { StoreFixture } from '@fleetcron/conformance';
import { RedisStore } from '@fleetcron/store-redis';
import type { Redis } from 'ioredis';
import { newClient, uniquePrefix } from './fixture.js';
import type { RedisProcessConfig } from './process-client.js';

/**
 * The store the fleet suite's store-on scenarios run with: each fixture a fresh prefix, each
 * `newStore()` a `RedisStore` on its own connection, and the same for a child process
 * (`processStore`).
 */
export function storeFixtures(url: () => Promise<string>): () => Promise<StoreFixture> {
  return async () => {
    const serverUrl = await url();
    const prefix = uniquePrefix();
    const clients: Redis[] = [];
    return {
      processStore: {
        module: new URL('./process-client.ts', import.meta.url).href,
        exportName: 'openStore',
        config: { url: serverUrl, prefix } satisfies RedisProcessConfig,
      },
      async newStore() {
        const client = newClient(serverUrl);
        clients.push(client);
        return new RedisStore(client, { prefix });
      },
      async close() {
        for (const client of clients.splice(0)) client.disconnect();
      },
    };
  };
}
