// RedisStore through the shared store suite (the scenarios hold the assertions; ./fixture.ts).
import { runStoreConformance } from '@fleetcron/conformance';
import { redisUrl } from '@fleetcron/testkit/vitest';
import { storeFixtures } from './fixture.js';

const url = redisUrl();
runStoreConformance({ name: 'redis', create: storeFixtures(url) });
const bounded = storeFixtures(url, { maxErrorLength: 100 });
runStoreConformance({ name: 'redis (maxErrorLength 100)', create: bounded, maxErrorLength: 100 });
