import { randomUUID } from 'node:crypto';
import type { StoreFixture } from '@fleetcron/conformance';
import { type StallLink, startStallLink } from '@fleetcron/testkit';
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

/** A fixture whose stores each reach etcd through a link of their own (see {@link linkedStoreFixture}). */
export type LinkedStoreFixture = StoreFixture & {
  prefix: string;
  admin: Etcd3;
  /** Stalls the links of the stores that watch schedules: bytes wait, connections stay open. */
  stallWatchers(): void;
  /**
   * Closes every connection through the links of the stores that watch schedules (a real cut:
   * their etcd clients see the connection drop and reconnect) and lets bytes flow again.
   * @returns how many links were cut.
   */
  cutWatchers(): number;
};

/**
 * {@link etcdStoreFixture} where every `newStore()` connects through its own testkit
 * `StallLink` (a TCP forwarder), so a test can cut or stall the connection of the stores that
 * watch schedules, and only theirs (an admin store writing beside them keeps its connection).
 * `S` builds the store (a mutant in the mutant tests).
 */
export async function linkedStoreFixture(
  server: { readonly endpoints: readonly string[] },
  defaults: EtcdStoreOptions = {},
  S: new (client: Etcd3, options: EtcdStoreOptions) => EtcdStore = EtcdStore,
): Promise<LinkedStoreFixture> {
  const target = new URL(server.endpoints[0]!);
  const base = await etcdStoreFixture(server, defaults);
  const links: { link: StallLink; client: Etcd3; store: EtcdStore; watching: boolean }[] = [];
  const watchers = () => links.filter((l) => l.watching).map((l) => l.link);
  return {
    ...base,
    async newStore() {
      const link = await startStallLink({ host: target.hostname, port: Number(target.port) });
      const client = new Etcd3({ hosts: [`http://127.0.0.1:${link.port}`] });
      const store = new S(client, { ...defaults, prefix: base.prefix });
      const entry = { link, client, store, watching: false };
      const watch = store.watchSchedules.bind(store);
      store.watchSchedules = (listener) => {
        entry.watching = true;
        return watch(listener);
      };
      links.push(entry);
      return store;
    },
    stallWatchers() {
      for (const link of watchers()) link.stall();
    },
    cutWatchers() {
      const cut = watchers();
      for (const link of cut) {
        link.moveTo({ host: target.hostname, port: Number(target.port) });
        link.flow();
      }
      return cut.length;
    },
    async close() {
      await Promise.allSettled(links.map(({ store }) => store.close()));
      for (const { client } of links) client.close();
      await Promise.allSettled(links.map(({ link }) => link.close()));
      await base.close();
    },
  };
}

/** Fixtures of {@link linkedStoreFixture} on the server at `endpoints()`. */
export function linkedStoreFixtures(
  endpoints: () => Promise<string[]>,
  defaults: EtcdStoreOptions = {},
  S?: new (client: Etcd3, options: EtcdStoreOptions) => EtcdStore,
): () => Promise<LinkedStoreFixture> {
  return async () => linkedStoreFixture({ endpoints: await endpoints() }, defaults, S);
}

/**
 * `dropPush` of the schedule conformance suite: cuts the connections of the fixture's watching
 * stores ({@link LinkedStoreFixture.cutWatchers}); fails when no store watches.
 */
export async function cutSchedulePush(fixture: StoreFixture): Promise<void> {
  const cut = (fixture as LinkedStoreFixture).cutWatchers();
  if (cut === 0) throw new Error('expected a store watching schedules to cut, found none');
}
