// EtcdLock through the shared lock suite (the scenarios hold the assertions; ./fixture.ts). The
// fleet suite is in fleet-part1/2.conformance.test.ts: files of their own, so that they run beside
// this one and the focused files, each on etcd servers of its own.
import { runLockConformance } from '@fleetcron/conformance';
import { dedicatedEtcd, etcdEndpoints } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const create = lockFixtures(etcdEndpoints());
const faults = dedicatedEtcd(lockFixtures);
// Records live until fireAt + 2 windows + a bucket (1 s) + TTL rounding (1 s) + the expiry loop.
runLockConformance({ name: 'etcd', create, faults, collectionLagMs: 5_000 });
