// EtcdStore through the shared store suite (the scenarios hold the assertions; ./fixture.ts).
import { runStoreConformance } from '@fleetcron/conformance';
import { etcdEndpoints } from '@fleetcron/testkit/vitest';
import { storeFixtures } from './fixture.js';

const endpoints = etcdEndpoints();
runStoreConformance({ name: 'etcd', create: storeFixtures(endpoints) });
const bounded = storeFixtures(endpoints, { maxErrorLength: 300 });
runStoreConformance({ name: 'etcd (maxErrorLength 300)', create: bounded, maxErrorLength: 300 });
