import { describe, expect, it } from 'vitest';
import { type FleetInstanceModule, fleetScenarios } from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

/** A mutant of ./fleet/restart-mutants.ts by export name. */
const mutant = (exportName: string): FleetInstanceModule => ({
  url: new URL('./fleet/restart-mutants.ts', import.meta.url).href,
  exportName,
});

/** Each many-jobs restart scenario, its mutant, and how it must report it. */
const cases: [keyof typeof fleetScenarios, string, RegExp][] = [
  ['restartManyJobsLockOnly', 'busyAfterCatchUp', /fires after the restart never started/],
  ['restartManyJobsWithStore', 'stallingStoreAfterCatchUp', /have no single succeeded row/],
];

describe('the many-jobs restart scenarios fail a fleet whose catch-up costs the next fires', () => {
  for (const [name, exportName, message] of cases) {
    it(`${exportName}: "${fleetScenarios[name].title}" fails`, async () => {
      await expect(
        fleetScenarios[name].run({
          name: exportName,
          create: memoryLockFixture(),
          instance: mutant(exportName),
        }),
      ).rejects.toThrow(message);
    }, 180_000);
  }
});
