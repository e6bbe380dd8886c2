import { randomUUID } from 'node:crypto';
import type { StoreFixture } from '@fleetcron/conformance';
import { EtcdStore } from '@fleetcron/store-etcd';
import { Etcd3 } from 'etcd3';
import type { EtcdProcessConfig } from './process-client.js';

/**
 * The store the fleet suite's store-on scenarios run with: each fixture a fresh prefix, each
 * `newStore()` an `EtcdStore` on its own client, and the same for a child process
 * (`processStore`). `close()` deletes the prefix.
 */
export function storeFixtures(endpoints: () => Promise<string[]>): () => Promise<StoreFixture> {
  return async () => {
    const hosts = await endpoints();
    const prefix = `fc-fleet-store/${randomUUID()}/`;
    const admin = new Etcd3({ hosts });
    const opened: { store: EtcdStore; client: Etcd3 }[] = [];
    let closed = false;
    return {
      processStore: {
        module: new URL('./process-client.ts', import.meta.url).href,
        exportName: 'openStore',
        config: { endpoints: hosts, prefix } satisfies EtcdProcessConfig,
      },
      async newStore() {
        const client = new Etcd3({ hosts });
        const store = new EtcdStore(client, { prefix });
        opened.push({ store, client });
        return store;
      },
      async close() {
        if (closed) return;
        closed = true;
        await Promise.allSettled(opened.map(({ store }) => store.close()));
        for (const { client } of opened) client.close();
        await admin
          .delete()
          .prefix(prefix)
          .catch(() => undefined);
        admin.close();
      },
    };
  };
}
