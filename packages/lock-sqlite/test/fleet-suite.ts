import type { FleetConformanceOptions } from '@fleetcron/conformance';
import { lockFixtures } from './fixture.js';

/**
 * The options of part `index` of 2 of the shared fleet suite on SqliteLock (real Schedulers in real time; its
 * scenarios hold the assertions). Each fixture is a SQLite file of its own. The many-jobs restart scenarios run in test/serial/restart.test.ts.
 */
export function fleetPart(index: 1 | 2): FleetConformanceOptions {
  return {
    name: 'sqlite',
    create: lockFixtures(),
    electorless: 'SQLite has no elector',
    part: { index, of: 2 },
  };
}
