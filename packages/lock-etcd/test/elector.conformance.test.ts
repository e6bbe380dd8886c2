// EtcdElector through the shared elector suite (the scenarios hold the assertions).
import { runElectorConformance } from '@fleetcron/conformance';
import { dedicatedEtcd, etcdEndpoints } from '@fleetcron/testkit/vitest';
import { electorFixtures } from './elector-fixture.js';

const faults = dedicatedEtcd(electorFixtures);
runElectorConformance({ name: 'etcd', create: electorFixtures(etcdEndpoints()), faults });
