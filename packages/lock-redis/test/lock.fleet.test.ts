// Real Schedulers on RedisLock, in real time, through the shared fleet suite (its scenarios hold
// the assertions); 20 fires instead of 30 keep the package's run short on a shared machine.
import { runFleetConformance } from '@fleetcron/conformance';
import { dedicatedRedis, redisUrl } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const faults = dedicatedRedis(lockFixtures);
runFleetConformance({ name: 'redis', create: lockFixtures(redisUrl()), faults, fires: 20 });
