import { randomUUID } from 'node:crypto';
import type { LockFixture, NewLockOptions } from '@fleetcron/conformance';
import type { EtcdServer } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { EtcdLock, type EtcdLockOptions } from '../src/index.js';

/** Starts `make` once, on first use; later calls share the promise. */
export function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let promise: Promise<T> | undefined;
  return () => {
    promise ??= make();
    return promise;
  };
}

/** A fresh client on `server` (each lock gets its own connection, as the suite requires). */
export function clientOf(server: EtcdServer): Etcd3 {
  return new Etcd3({ hosts: server.endpoints });
}

/**
 * A conformance fixture: a unique key prefix on `server`; every `newLock()` gets its own `Etcd3`
 * client. `close()` closes the locks and clients and deletes the prefix.
 */
export async function etcdFixture(
  server: EtcdServer,
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
  const opened: { lock: EtcdLock; client: Etcd3 }[] = [];
  let closed = false;
  return {
    prefix,
    admin,
    async newLock(options: NewLockOptions & EtcdLockOptions = {}) {
      const client = clientOf(server);
      const lock = new EtcdLock(client, { ...defaults, prefix, ...options });
      opened.push({ lock, client });
      return lock;
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
