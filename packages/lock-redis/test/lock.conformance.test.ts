// RedisLock through the shared lock suite (the scenarios hold the assertions; ./fixture.ts).
import { runLockConformance } from '@fleetcron/conformance';
import { dedicatedRedis, redisUrl } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const faults = dedicatedRedis(lockFixtures);
runLockConformance({ name: 'redis', create: lockFixtures(redisUrl()), faults });
