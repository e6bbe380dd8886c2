// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runStoreConformance } from '@fleetcron/conformance';
import { sharedUrl, storeFixture } from './fixture.js';

runStoreConformance({
  name: 'redis',
  create: async () => storeFixture(sharedUrl()),
});

runStoreConformance({
  name: 'redis (maxErrorLength 100)',
  maxErrorLength: 100,
  create: async () => storeFixture(sharedUrl(), { maxErrorLength: 100 }),
});
