// EtcdStore's audit log through the shared audit suite (the scenarios hold the assertions):
// every entry put inside its mutation's transaction, bounded to `audit.maxEntries`.
import { runAuditConformance } from '@fleetcron/conformance';
import { etcdEndpoints } from '@fleetcron/testkit/vitest';
import { storeFixtures } from './fixture.js';

runAuditConformance({
  name: 'etcd',
  create: storeFixtures(etcdEndpoints(), { audit: { maxEntries: 40 } }),
  maxEntries: 40,
});
