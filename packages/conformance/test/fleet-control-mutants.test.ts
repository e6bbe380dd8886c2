import { describe, expect, it } from 'vitest';
import { type FleetInstanceModule, fleetScenarios } from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

/** A mutant of ./fleet/control-mutants.ts by export name. */
const mutant = (exportName: string): FleetInstanceModule => ({
  url: new URL('./fleet/control-mutants.ts', import.meta.url).href,
  exportName,
});

/** Each fleet-control scenario, its mutant, and how it must report it. */
const cases: [keyof typeof fleetScenarios, string, RegExp][] = [
  ['driftFlagged', 'noRegistry', /a fleet\.drift event for the job with two schedules/],
];

describe('the fleet-control scenarios fail a fleet with that control broken', () => {
  for (const [name, exportName, message] of cases) {
    it(`${exportName}: "${fleetScenarios[name].title}" fails`, async () => {
      await expect(
        fleetScenarios[name].run({
          name: exportName,
          create: memoryLockFixture(),
          instance: mutant(exportName),
          timeScale: 0.5,
        }),
      ).rejects.toThrow(message);
    }, 90_000);
  }
});
