/**
 * Opens this package's clients in a fleet scenario's child process (the conformance suite's
 * `ProcessClient`): the child calls etcd on a client of its own, not through the test process.
 */
import { EtcdStore } from '@fleetcron/store-etcd';
import { Etcd3 } from 'etcd3';
import { EtcdLock, type EtcdLockOptions } from '../src/index.js';

/** What a child needs to open a client on a fixture's prefix. */
export interface EtcdProcessConfig {
  endpoints: string[];
  prefix: string;
  /** Lock options beyond the prefix (the fixture's defaults). */
  lock?: Omit<EtcdLockOptions, 'prefix' | 'clock'>;
}

/** An `EtcdLock` on the fixture's prefix. */
export function openLock(config: EtcdProcessConfig): EtcdLock {
  const client = new Etcd3({ hosts: config.endpoints });
  return new EtcdLock(client, { ...config.lock, prefix: config.prefix });
}

/** An `EtcdStore` on the fixture's prefix. */
export function openStore(config: EtcdProcessConfig): EtcdStore {
  return new EtcdStore(new Etcd3({ hosts: config.endpoints }), { prefix: config.prefix });
}
