import type { FleetConformanceOptions } from '@fleetcron/conformance';
import { dedicatedRedis, redisUrl } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

/**
 * The options of part `index` of 2 of the shared fleet suite on RedisLock (real Schedulers in real time; its
 * scenarios hold the assertions); 20 fires instead of 30 keep the package's run short on a shared
 * machine. The many-jobs restart scenarios run in test/serial/restart.test.ts.
 */
export function fleetPart(index: 1 | 2): FleetConformanceOptions {
  const faults = dedicatedRedis(lockFixtures);
  const url = redisUrl();
  const create = lockFixtures(url);
  return { name: 'redis', create, faults, fires: 20, part: { index, of: 2 } };
}
