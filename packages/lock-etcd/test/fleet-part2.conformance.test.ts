// Real Schedulers on EtcdLock, in real time, through the shared fleet suite (its scenarios hold
// the assertions; ./fixture.ts): part 2 of 2, so that the two parts run side by side. The
// file's etcd servers (the shared one, and the dedicated one a server-restart scenario restarts)
// are its own.
import { runFleetConformance } from '@fleetcron/conformance';
import { dedicatedEtcd, etcdEndpoints } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const create = lockFixtures(etcdEndpoints());
const faults = dedicatedEtcd(lockFixtures);
runFleetConformance({ name: 'etcd', create, faults, part: { index: 2, of: 2 } });
