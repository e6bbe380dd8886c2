import type { FleetScenario } from '../types.js';
import { catchUpScenarios } from './catch-up-scenarios.js';
import { driftFlagged } from './drift-scenario.js';
import { holderKilledMidRun } from './holder-lost-scenario.js';
import { runRequestFromAnotherProcess } from './run-request-scenario.js';

/**
 * The fleet-control scenarios (issue 13), registered by `runFleetConformance`: catch-up after the
 * whole fleet was down, a holder SIGKILLed mid-run, a run request from a process that registers
 * no job, drift. Judged from the append-only ledger and the store's history, never from the
 * scheduler's own counters. The many-jobs restart scenarios (`restartManyScenarios`) are not
 * registered: beside the rest of a CI run on 2 cores they lose fires on every real backend
 * (issue #25); `test/fleet-restart-mutants.test.ts` runs them on memory, and an adapter runs them
 * by hand on clients of its own (`LockFixture.processLock`).
 */
export const fleetControlScenarios = {
  ...catchUpScenarios,
  holderKilledMidRun,
  runRequestFromAnotherProcess,
  driftFlagged,
} as const satisfies Record<string, FleetScenario>;
