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
