import type { FleetScenario } from '../types.js';
import { catchUpScenarios } from './catch-up-scenarios.js';
import { driftFlagged } from './drift-scenario.js';
import { holderKilledMidRun } from './holder-lost-scenario.js';
import { runRequestFromAnotherProcess } from './run-request-scenario.js';
import { watchdogMissedFires, watchdogNotifiesOnce } from './watchdog-scenarios.js';

/**
 * The fleet-control scenarios (issue 13), registered by `runFleetConformance`: catch-up after the
 * whole fleet was down, a holder SIGKILLed mid-run, a run request from a process that registers
 * no job, drift, the fleet watchdog (issue #30). Judged from the append-only ledger and the
 * store's history, never from the scheduler's own counters. The watchdog's e-mail delivery
 * (`watchdogEmailsOnce`) and run requests under taker faults (`runRequestFaultScenarios`) run in
 * the conformance package's own tests on the memory lock: the lock adds nothing to what they
 * prove, and each lock would add seconds of CI. The many-jobs restart scenarios (`restartManyScenarios`) are
 * registered by `runRestartConformance` instead, in a test file that runs alone: beside the rest
 * of a CI run on 2 cores they measure the machine, not the backend (issue #25).
 */
export const fleetControlScenarios = {
  ...catchUpScenarios,
  holderKilledMidRun,
  runRequestFromAnotherProcess,
  driftFlagged,
  watchdogNotifiesOnce,
  watchdogMissedFires,
} as const satisfies Record<string, FleetScenario>;
