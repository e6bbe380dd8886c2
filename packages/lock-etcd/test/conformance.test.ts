// EtcdLock through the shared suites (the scenarios hold the assertions; ./fixture.ts). The fleet
// suite runs after the lock suite, never beside its 10,000-claim storage scenario.
import { runFleetConformance, runLockConformance } from '@fleetcron/conformance';
import { dedicatedEtcd, etcdEndpoints } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const create = lockFixtures(etcdEndpoints());
const faults = dedicatedEtcd(lockFixtures);
// Records live until fireAt + 2 windows + a bucket (1 s) + TTL rounding (1 s) + the expiry loop.
runLockConformance({ name: 'etcd', create, faults, collectionLagMs: 5_000 });
runFleetConformance({ name: 'etcd', create, faults });
