import { describe, expect, it } from 'vitest';
import {
  type FleetInstanceModule,
  fleetScenarios,
  runRequestFaultScenarios,
} from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

const scenarios = { ...fleetScenarios, ...runRequestFaultScenarios };

/** A mutant of ./fleet/control-mutants.ts by export name. */
const mutant = (exportName: string): FleetInstanceModule => ({
  url: new URL('./fleet/control-mutants.ts', import.meta.url).href,
  exportName,
});

/** Each fleet-control scenario, its mutant, and how it must report it. */
const cases: [keyof typeof scenarios, string, RegExp][] = [
  ['driftFlagged', 'noRegistry', /a fleet\.drift event for the job with two schedules/],
  ['runRequestFromAnotherProcess', 'ignoresRunRequests', /the requested run to start/],
  ['catchUpLatest', 'refusesCatchUp', /missed fires that ran/],
  ['catchUpMaxThreeExclusive', 'laggingMarkRead', /missed fires that ran/],
  ['holderKilledMidRun', 'dropsLeaseLost', /recorded lease_lost/],
  ['runRequestTakerKilled', 'consumesRunRequests', /the requested run to start/],
  ['runRequestTakerStopped', 'ignoresReleases', /given back, not left to the lease/],
  // taken again at once (before the lease), or, with every take replacing the last within a
  // millisecond, never decided at all
  [
    'runRequestTakeReplyLost',
    'shortTakeLease',
    /not before the take’s lease ended|the requested run to start/,
  ],
];

describe('the fleet-control scenarios fail a fleet with that control broken', () => {
  for (const [name, exportName, message] of cases) {
    it(`${exportName}: "${scenarios[name].title}" fails`, async () => {
      await expect(
        scenarios[name].run({
          name: exportName,
          create: memoryLockFixture(),
          instance: mutant(exportName),
          timeScale: 0.5,
        }),
      ).rejects.toThrow(message);
    }, 90_000);
  }
});
