import { type FleetConformanceOptions, restartStoreOption } from '@fleetcron/conformance';
import { dedicatedRedis, redisUrl } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';
import { storeFixtures } from './store-fixture.js';

/**
 * The options of part `index` of 2 of the shared fleet suite on RedisLock (real Schedulers in real time; its
 * scenarios hold the assertions); 20 fires instead of 30 keep the package's run short on a shared
 * machine. The store-on restart scenario, when run (it is not registered yet, issue #25), uses a `MemoryStore`, or `RedisStore` with
 * `FLEETCRON_RESTART_STORE=backend` (`restartStoreOption`).
 */
export function fleetPart(index: 1 | 2): FleetConformanceOptions {
  const faults = dedicatedRedis(lockFixtures);
  const url = redisUrl();
  const create = lockFixtures(url);
  const store = restartStoreOption(() => storeFixtures(url));
  return { name: 'redis', create, faults, ...store, fires: 20, part: { index, of: 2 } };
}
