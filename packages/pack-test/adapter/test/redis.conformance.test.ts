// A lock on a real Redis server that the published testkit starts, through the whole lock suite.
import { runLockConformance } from '@fleetcron/conformance';
import { dedicatedRedis, redisUrl } from '@fleetcron/testkit/vitest';
import { redisLockFixtures } from './redis-fixture.js';

const faults = dedicatedRedis(redisLockFixtures);
runLockConformance({ name: 'redis', create: redisLockFixtures(redisUrl()), faults });
