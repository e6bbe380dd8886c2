import { startRedis } from '@fleetcron/testkit';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../src/index.js';
import { newClient, uniquePrefix } from './fixture.js';

// Fleet control beyond the conformance suite: the pub/sub connection killed by the server.

const opened: Redis[] = [];
afterAll(() => {
  for (const client of opened) client.disconnect();
});
function client(url: string): Redis {
  const c = newClient(url);
  opened.push(c);
  return c;
}

/** Polls `attempt` every 100 ms until it returns true; fails after `timeoutMs` naming `what`. */
async function until(attempt: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await attempt())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('RedisStore fleet control', () => {
  it('pub/sub wakes watchers again after the server kills the subscriber connection', async () => {
    // A server of its own: CLIENT KILL TYPE pubsub would hit other tests' subscribers.
    const server = await startRedis({ strategy: 'managed' });
    const prefix = uniquePrefix();
    const listening = new RedisStore(client(server.url), { prefix });
    const writer = new RedisStore(client(server.url), { prefix });
    const woken: string[] = [];
    const unsubscribe = listening.watchRunRequests((job) => woken.push(job));
    try {
      const wakes = (job: string) =>
        until(
          async () => {
            await writer.requestRun({ job, requestedBy: 'test' });
            return woken.includes(job);
          },
          15_000,
          `a message for ${job}`,
        );
      await wakes('before');
      const admin = client(server.url);
      const killed = await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      expect(Number(killed), 'our subscriber was killed').toBe(1);
      await wakes('after');
    } finally {
      unsubscribe();
      await listening.close();
      for (const c of opened.splice(0)) c.disconnect();
      await server.close();
    }
  }, 60_000);
});
