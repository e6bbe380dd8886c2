// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runStoreConformance } from '@fleetcron/conformance';
import { startEtcd } from '@fleetcron/testkit';
import { afterAll } from 'vitest';
import { etcdStoreFixture, lazy } from './fixture.js';

// One shared server for the whole file; every fixture gets its own key prefix.
const shared = lazy(() => startEtcd());
afterAll(async () => {
  await (await shared()).close();
});

runStoreConformance({ name: 'etcd', create: async () => etcdStoreFixture(await shared()) });

runStoreConformance({
  name: 'etcd (maxErrorLength 300)',
  create: async () => etcdStoreFixture(await shared(), { maxErrorLength: 300 }),
  maxErrorLength: 300,
});
