import { randomUUID } from 'node:crypto';
import type { StoreFixture } from '@fleetcron/conformance';
import { Etcd3 } from 'etcd3';
import { EtcdStore, type EtcdStoreOptions } from '../src/index.js';

/** Starts `make` once, on first use; later calls share the promise. */
export function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => {
    promise ??= make();
    return promise;
  };
}

/**
 * Conformance fixtures on the server at `endpoints()` (shared or dedicated:
 * `@fleetcron/testkit/vitest`), made by {@link etcdStoreFixture}.
 */
export function storeFixtures(
  endpoints: () => Promise<string[]>,
  defaults: EtcdStoreOptions = {},
): () => Promise<StoreFixture> {
  return async () => etcdStoreFixture({ endpoints: await endpoints() }, defaults);
}

/**
 * A conformance fixture: a unique key prefix on `server`; every `newStore()` gets its own
 * `Etcd3` client. `close()` closes the stores and clients and deletes the prefix.
 */
export async function etcdStoreFixture(
  server: { readonly endpoints: readonly string[] },
  defaults: EtcdStoreOptions = {},
): Promise<StoreFixture & { prefix: string; admin: Etcd3 }> {
  const prefix = `fc-store-test/${randomUUID()}/`;
  const admin = new Etcd3({ hosts: [...server.endpoints] });
  const opened: { store: EtcdStore; client: Etcd3 }[] = [];
  let closed = false;
  return {
    prefix,
    admin,
    async newStore() {
      const client = new Etcd3({ hosts: [...server.endpoints] });
      const store = new EtcdStore(client, { ...defaults, prefix });
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
}
