import { randomUUID } from 'node:crypto';
import type { ElectorFixture } from '@fleetcron/conformance';
import type { Etcd3 } from 'etcd3';
import { EtcdElector } from '../src/index.js';
import { clientOf } from './fixture.js';

/**
 * Elector conformance fixtures on the server at `endpoints()`: a unique key prefix per fixture,
 * every `newElector()` its own client (the candidate's clock is passed on: etcd's own lease TTLs
 * judge expiry, the clock only dates answers).
 */
export function electorFixtures(endpoints: () => Promise<string[]>): () => Promise<ElectorFixture> {
  return async () => {
    const server = { endpoints: await endpoints() };
    const prefix = `fc-elect/${randomUUID()}/`;
    const opened: { elector: EtcdElector; client: Etcd3 }[] = [];
    let closed = false;
    return {
      async newElector(options = {}) {
        const client = clientOf(server);
        const elector = new EtcdElector(client, { prefix, clock: options.clock });
        opened.push({ elector, client });
        return elector;
      },
      async close() {
        if (closed) return;
        closed = true;
        await Promise.allSettled(opened.map(({ elector }) => elector.close()));
        for (const { client } of opened) client.close();
      },
    };
  };
}
