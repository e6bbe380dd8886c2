import { type FleetConformanceOptions, restartStoreOption } from '@fleetcron/conformance';
import { dedicatedEtcd, etcdEndpoints } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';
import { storeFixtures } from './store-fixture.js';

/**
 * The options of part `index` of 2 of the shared fleet suite on EtcdLock (real Schedulers in real time; its
 * scenarios hold the assertions). Called at the top of a test file (`runFleetConformance(fleetPart(1))`): the file's etcd servers (the
 * shared one, and the dedicated one a server-restart scenario restarts) are its own. The store-on
 * restart scenario, when run (it is not registered yet, issue #25), uses a `MemoryStore`, or `EtcdStore` with `FLEETCRON_RESTART_STORE=backend`
 * (`restartStoreOption`).
 */
export function fleetPart(index: 1 | 2): FleetConformanceOptions {
  const endpoints = etcdEndpoints();
  const create = lockFixtures(endpoints);
  const faults = dedicatedEtcd(lockFixtures);
  const store = restartStoreOption(() => storeFixtures(endpoints));
  return { name: 'etcd', create, faults, ...store, part: { index, of: 2 } };
}
