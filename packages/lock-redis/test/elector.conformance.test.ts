// RedisElector through the shared elector suite (the scenarios hold the assertions).
import { runElectorConformance } from '@fleetcron/conformance';
import { dedicatedRedis, redisUrl } from '@fleetcron/testkit/vitest';
import { electorFixtures } from './elector-fixture.js';

const faults = dedicatedRedis(electorFixtures);
runElectorConformance({ name: 'redis', create: electorFixtures(redisUrl()), faults });
