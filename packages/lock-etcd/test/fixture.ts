import { randomUUID } from 'node:crypto';
import type { LockFixture, NewLockOptions } from '@fleetcron/conformance';
import { Etcd3 } from 'etcd3';
import { EtcdElector, EtcdLock, type EtcdLockOptions } from '../src/index.js';
import type { EtcdProcessConfig } from './process-client.js';

/** What a fixture needs of a server: its client endpoints (a testkit `EtcdServer` has them). */
export interface EtcdEndpoints {
  readonly endpoints: readonly string[];
}

/** Starts `make` once, on first use; later calls share the promise. */
export function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => {
    promise ??= make();
    return promise;
  };
}

/** A fresh client on `server` (each lock gets its own connection, as the suite requires). */
export function clientOf(server: EtcdEndpoints): Etcd3 {
  return new Etcd3({ hosts: [...server.endpoints] });
}

/**
 * Conformance fixtures on the server at `endpoints()` (shared or dedicated:
 * `@fleetcron/testkit/vitest`), made by {@link etcdFixture}.
 */
export function lockFixtures(
  endpoints: () => Promise<string[]>,
  defaults: EtcdLockOptions = {},
): () => Promise<LockFixture> {
  return async () => etcdFixture({ endpoints: await endpoints() }, defaults);
}

/**
 * A conformance fixture: a unique key prefix on `server`; every `newLock()` (and `newElector()`,
 * under `<prefix>elect/`) gets its own `Etcd3` client. `close()` closes them and their clients
 * and deletes the prefix.
 */
export async function etcdFixture(
  server: EtcdEndpoints,
  defaults: EtcdLockOptions = {},
): Promise<
  LockFixture & {
    prefix: string;
    admin: Etcd3;
    newLock(options?: NewLockOptions & EtcdLockOptions): Promise<EtcdLock>;
  }
> {
  const prefix = `fc-test/${randomUUID()}/`;
  const admin = clientOf(server);
  const opened: { lock: EtcdLock | EtcdElector; client: Etcd3 }[] = [];
  let closed = false;
  const { clock: _clock, ...serializable } = defaults;
  return {
    prefix,
    admin,
    processLock: {
      module: new URL('./process-client.ts', import.meta.url).href,
      exportName: 'openLock',
      config: {
        endpoints: [...server.endpoints],
        prefix,
        lock: serializable,
      } satisfies EtcdProcessConfig,
    },
    async newLock(options: NewLockOptions & EtcdLockOptions = {}) {
      const client = clientOf(server);
      const lock = new EtcdLock(client, { ...defaults, prefix, ...options });
      opened.push({ lock, client });
      return lock;
    },
    async newElector(options = {}) {
      const client = clientOf(server);
      const elector = new EtcdElector(client, { prefix: `${prefix}elect/`, clock: options.clock });
      opened.push({ lock: elector, client });
      return elector;
    },
    probe: {
      claimRecordCount: () => admin.getAll().prefix(`${prefix}c/`).count(),
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled(opened.map(({ lock }) => lock.close()));
      for (const { client } of opened) client.close();
      await admin
        .delete()
        .prefix(prefix)
        .catch(() => undefined);
      admin.close();
    },
  };
}
