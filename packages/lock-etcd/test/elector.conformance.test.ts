// Wires the etcd elector into the shared elector suite; each registered scenario holds its own
// assertions (packages/conformance/src/elector), so this file has no expect() of its own.
import { randomUUID } from 'node:crypto';
import { type ElectorFixture, runElectorConformance } from '@fleetcron/conformance';
import { type EtcdServer, startEtcd } from '@fleetcron/testkit';
import type { Etcd3 } from 'etcd3';
import { afterAll } from 'vitest';
import { ETCD_ELECTOR_CAPABILITIES, EtcdElector } from '../src/index.js';
import { clientOf, lazy } from './fixture.js';

const shared = lazy(() => startEtcd());
afterAll(async () => {
  await (await shared()).close();
});

/** A unique key prefix on `server`; every newElector() gets its own client. */
async function electorFixture(server: EtcdServer): Promise<ElectorFixture> {
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
}

runElectorConformance({
  name: 'etcd',
  capabilities: { ...ETCD_ELECTOR_CAPABILITIES },
  create: async () => electorFixture(await shared()),
  faults: async () => {
    const server = await startEtcd({ strategy: 'managed' });
    return { create: () => electorFixture(server), server, close: () => server.close() };
  },
});
