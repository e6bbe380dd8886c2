import type { FleetConformanceOptions } from '@fleetcron/conformance';
import { dedicatedEtcd, etcdEndpoints } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

/**
 * The options of part `index` of 2 of the shared fleet suite on EtcdLock (real Schedulers in real time; its
 * scenarios hold the assertions). Called at the top of a test file (`runFleetConformance(fleetPart(1))`): the file's etcd servers (the
 * shared one, and the dedicated one a server-restart scenario restarts) are its own. The many-jobs restart scenarios run in test/serial/restart.test.ts.
 */
export function fleetPart(index: 1 | 2): FleetConformanceOptions {
  const endpoints = etcdEndpoints();
  const create = lockFixtures(endpoints);
  const faults = dedicatedEtcd(lockFixtures);
  return { name: 'etcd', create, faults, part: { index, of: 2 } };
}
