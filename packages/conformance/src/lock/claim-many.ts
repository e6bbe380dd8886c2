import type { LockScenario } from '../types.js';
import { claimManyRefusals, claimManyThousandKeys } from './claim-many-limits.js';
import { claimManyMatchesSingleClaims } from './claim-many-mixed.js';
import { claimManyOverlappingBatches } from './claim-many-race.js';
import { claimManyRenewalsMatchSingles } from './claim-many-renew.js';
import { claimManyResentBatch, claimManySameKeyInOrder } from './claim-many-replay.js';

/**
 * The batched-claim scenarios (`claimMany`, `extendMany`, `releaseMany`). Each runs on every lock
 * whose capabilities declare `maxBatch`; on other locks it checks that no `claimMany` is left
 * undeclared and reports itself skipped as not applicable.
 */
export const claimManyScenarios = {
  claimManyMatchesSingleClaims,
  claimManyOverlappingBatches,
  claimManyResentBatch,
  claimManySameKeyInOrder,
  claimManyRefusals,
  claimManyThousandKeys,
  claimManyRenewalsMatchSingles,
} as const satisfies Record<string, LockScenario>;
