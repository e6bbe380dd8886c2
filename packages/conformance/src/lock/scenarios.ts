import type { LockScenario } from '../types.js';
import { readingLockCapabilities } from './capabilities.js';
import { catchUpScenarios } from './catch-up.js';
import { claimManyScenarios } from './claim-many.js';
import {
  exclusiveBusyOnce,
  freshIsolatedFixtures,
  independentOverlappingLeases,
  lateClaimerLoses,
  oneWinnerPerFire,
  outOfOrderFires,
  replaySameLease,
  staleAndEarly,
} from './claims.js';
import { earlyByBackendClock } from './clock.js';
import { mutualExclusionFuzz } from './fuzz.js';
import { oddKeys } from './keys.js';
import {
  extendOwnerOnly,
  leaseExpiryHandsOver,
  skewedClientCannotSteal,
  staleReleaseIgnored,
  tokensIncrease,
} from './leases.js';
import { readMarksMatchInspect } from './read-marks.js';
import { boundedStorage } from './storage.js';
import { withdrawHandsBack } from './withdraw.js';

/**
 * Every lock scenario that needs no server faults, in the order `runLockConformance` registers
 * them. Each is a plain async function of the adapter's options (it reads the capabilities from
 * a lock of `options.create()` first), so it can be run (and expected to fail) outside the
 * registered tests.
 */
export const lockScenarios = readingLockCapabilities({
  freshIsolatedFixtures,
  oneWinnerPerFire,
  lateClaimerLoses,
  outOfOrderFires,
  staleAndEarly,
  earlyByBackendClock,
  boundedStorage,
  independentOverlappingLeases,
  exclusiveBusyOnce,
  leaseExpiryHandsOver,
  extendOwnerOnly,
  staleReleaseIgnored,
  tokensIncrease,
  replaySameLease,
  oddKeys,
  skewedClientCannotSteal,
  mutualExclusionFuzz,
  withdrawHandsBack,
  ...catchUpScenarios,
  readMarksMatchInspect,
  ...claimManyScenarios,
} as const satisfies Record<string, LockScenario>);

/** Name of a lock scenario. */
export type LockScenarioName = keyof typeof lockScenarios;
