// Real Schedulers on RedisLock, in real time, through the shared fleet suite (its scenarios hold
// the assertions): part 2 of 2, so that the two parts run side by side; 20 fires instead of 30
// keep the package's run short on a shared machine.
import { runFleetConformance } from '@fleetcron/conformance';
import { dedicatedRedis, redisUrl } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const faults = dedicatedRedis(lockFixtures);
const create = lockFixtures(redisUrl());
runFleetConformance({ name: 'redis', create, faults, fires: 20, part: { index: 2, of: 2 } });
