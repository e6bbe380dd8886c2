import type { FleetConformanceOptions } from '@fleetcron/conformance';
import { dedicatedPostgres, postgresDatabase } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

/**
 * The options of part `index` of 2 of the shared fleet suite on PostgresLock (real Schedulers in real time; its
 * scenarios hold the assertions), with the opt-in prepared statements (the lock suite in
 * conformance.test.ts runs the default). Called at the top of a test file (`runFleetConformance(fleetPart(1))`): a database of its own
 * on the run's shared server. The many-jobs restart scenarios run in test/serial/restart.test.ts.
 */
export function fleetPart(index: 1 | 2): FleetConformanceOptions {
  const url = postgresDatabase();
  const prepared = (at: () => Promise<string>) => lockFixtures(at, { preparedStatements: true });
  return {
    name: 'postgres (prepared statements)',
    create: prepared(url),
    faults: dedicatedPostgres(prepared),
    part: { index, of: 2 },
  };
}
