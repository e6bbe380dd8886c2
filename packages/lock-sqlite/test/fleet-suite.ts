import { type FleetConformanceOptions, restartStoreOption } from '@fleetcron/conformance';
import { lockFixtures } from './fixture.js';
import { storeFixtures } from './store-fixture.js';

/**
 * The options of part `index` of 2 of the shared fleet suite on SqliteLock (real Schedulers in real time; its
 * scenarios hold the assertions). Each fixture is a SQLite file of its own. The store-on restart
 * scenario, when run (it is not registered yet, issue #25), uses a `MemoryStore`, or `SqliteStore` with `FLEETCRON_RESTART_STORE=backend`
 * (`restartStoreOption`).
 */
export function fleetPart(index: 1 | 2): FleetConformanceOptions {
  return {
    name: 'sqlite',
    create: lockFixtures(),
    ...restartStoreOption(() => storeFixtures()),
    electorless: 'SQLite has no elector',
    part: { index, of: 2 },
  };
}
