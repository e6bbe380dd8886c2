import type { ElectorFixture } from '@fleetcron/conformance';
import type { Redis } from 'ioredis';
import { RedisElector } from '../src/index.js';
import { newClient, uniquePrefix } from './fixture.js';

/**
 * Elector conformance fixtures on the server at `url()`: a fresh prefix per fixture, every
 * `newElector()` its own client.
 */
export function electorFixtures(url: () => Promise<string>): () => Promise<ElectorFixture> {
  return async () => electorFixture(await url());
}

/** An elector conformance fixture: a fresh prefix on `url`; every newElector() its own client. */
export async function electorFixture(url: string): Promise<ElectorFixture> {
  const prefix = uniquePrefix();
  const clients: Redis[] = [];
  return {
    async newElector() {
      // the clock option is ignored on purpose: the Redis clock judges (capabilities.clock 'backend')
      const client = newClient(url);
      clients.push(client);
      return new RedisElector(client, { prefix });
    },
    async close() {
      for (const client of clients.splice(0)) client.disconnect();
    },
  };
}
