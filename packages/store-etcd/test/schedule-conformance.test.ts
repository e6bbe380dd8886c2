// EtcdStore's stored schedules through the shared suite (the scenarios hold the assertions):
// every store reaches the shared etcd through a TCP link of its own, and a lost notification is
// the watching store's connection cut at its link (./fixture.ts, linkedStoreFixture).
import { runScheduleStoreConformance } from '@fleetcron/conformance';
import { etcdEndpoints } from '@fleetcron/testkit/vitest';
import { cutSchedulePush, linkedStoreFixtures } from './fixture.js';

runScheduleStoreConformance({
  name: 'etcd',
  create: linkedStoreFixtures(etcdEndpoints()),
  dropPush: cutSchedulePush,
});
