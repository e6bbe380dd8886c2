import { type FleetConformanceOptions, restartStoreOption } from '@fleetcron/conformance';
import { dedicatedPostgres, postgresDatabase } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';
import { storeFixtures } from './store-fixture.js';

/**
 * The options of part `index` of 2 of the shared fleet suite on PostgresLock (real Schedulers in real time; its
 * scenarios hold the assertions), with the opt-in prepared statements (the lock suite in
 * conformance.test.ts runs the default). The store-on restart scenario, when run (it is not registered yet, issue #25), uses a `MemoryStore`, or
 * `PostgresStore` with `FLEETCRON_RESTART_STORE=backend` (`restartStoreOption`). Called at the top of a test file (`runFleetConformance(fleetPart(1))`): a database of its own
 * on the run's shared server.
 */
export function fleetPart(index: 1 | 2): FleetConformanceOptions {
  const url = postgresDatabase();
  const prepared = (at: () => Promise<string>) => lockFixtures(at, { preparedStatements: true });
  return {
    name: 'postgres (prepared statements)',
    create: prepared(url),
    faults: dedicatedPostgres(prepared),
    ...restartStoreOption(() => storeFixtures(url)),
    part: { index, of: 2 },
  };
}
