import { MemoryLock } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { type LockConformanceOptions, type LockScenarioName, lockScenarios } from '../src/index.js';
import { batchClaimerOf, reportNotApplicable } from '../src/lock/claim-many-support.js';
import { type MemoryLockClass, memoryLockFixture } from './memory-fixture.js';
import {
  AppliesBatchReversed,
  ChecksThenTakes,
  ExtendsWithFirstLeaseMs,
  IgnoresAbortedBatch,
  ReleaseManyAlwaysTrue,
  ResendGetsNewToken,
  WinsFireTakenInBatch,
} from './mutants/claim-many-mutants.js';
import { SmallBatchLock } from './small-batch-lock.js';

/** The suite's options over a MemoryLock class (capabilities as the lock declares them). */
const options = (Lock: MemoryLockClass): LockConformanceOptions => {
  const built = {
    name: 'mutant',
    create: memoryLockFixture(Lock),
    inProcess: true,
    capabilities: new Lock({}).capabilities,
  };
  return built as LockConformanceOptions;
};

const CLAIM_MANY: LockScenarioName[] = [
  'claimManyMatchesSingleClaims',
  'claimManyOverlappingBatches',
  'claimManyResentBatch',
  'claimManySameKeyInOrder',
  'claimManyRefusals',
  'claimManyThousandKeys',
  'claimManyRenewalsMatchSingles',
];

/** Each mutant breaks one rule of claimMany; the scenario named for that rule must fail. */
const cases: [string, MemoryLockClass, LockScenarioName, RegExp][] = [
  [
    '(b1) a fire won earlier in the batch is won again by another owner',
    WinsFireTakenInBatch,
    'claimManyMatchesSingleClaims',
    /same-key-in-batch \(batch\).*claimMany answered .*won.*a single claim .*lost \(claimed\)/,
  ],
  [
    '(b1) the same, seen by the in-order scenario',
    WinsFireTakenInBatch,
    'claimManySameKeyInOrder',
    /answers in order/,
  ],
  [
    '(b2) the batch applied in reverse order',
    AppliesBatchReversed,
    'claimManyMatchesSingleClaims',
    /claimMany answered .* a single claim|hands out token \d+, which must be an integer above/,
  ],
  [
    '(b2) the same, seen by the in-order scenario',
    AppliesBatchReversed,
    'claimManySameKeyInOrder',
    /answers in order/,
  ],
  [
    '(b3) check, yield, then take (not atomic)',
    ChecksThenTakes,
    'claimManyOverlappingBatches',
    /round \d+, race \d+: (exactly one winner|the others lose)/,
  ],
  [
    '(b4) a re-sent fire gets a new token',
    ResendGetsNewToken,
    'claimManyResentBatch',
    /re-sent via the same connection/,
  ],
  [
    '(b4) the same, seen by the mixed batch (own live lease)',
    ResendGetsNewToken,
    'claimManyMatchesSingleClaims',
    /own-live \(batch\)/,
  ],
  [
    '(b5) an aborted signal is ignored',
    IgnoresAbortedBatch,
    'claimManyRefusals',
    /aborted signal: expected a BACKEND_UNAVAILABLE error/,
  ],
  [
    '(b6) extendMany uses the first leaseMs for every lease',
    ExtendsWithFirstLeaseMs,
    'claimManyRenewalsMatchSingles',
    /its own leaseMs/,
  ],
  [
    '(b7) releaseMany answers true for leases it does not hold',
    ReleaseManyAlwaysTrue,
    'claimManyRenewalsMatchSingles',
    /releaseMany answers as release does/,
  ],
];

describe('the claimMany scenarios fail broken batches', () => {
  for (const [title, Lock, scenario, message] of cases) {
    it(`${title}: "${lockScenarios[scenario].title}" fails`, async () => {
      await expect(lockScenarios[scenario].run(options(Lock))).rejects.toThrow(message);
    }, 60_000);
  }

  it('every claimMany scenario passes on MemoryLock split into batches of 7', async () => {
    for (const scenario of CLAIM_MANY) await lockScenarios[scenario].run(options(SmallBatchLock));
    expect(new SmallBatchLock({}).capabilities.maxBatch).toBe(7);
  }, 180_000);
});

/** A MemoryLock with `claimMany` but no `capabilities.maxBatch`. */
class UndeclaredBatch extends MemoryLock {
  constructor() {
    super();
    const { maxBatch: _dropped, ...rest } = this.capabilities;
    Object.assign(this, { capabilities: rest });
  }
}

/** A lock with neither `claimMany` nor `maxBatch` (a backend without batches). */
class NoBatch extends UndeclaredBatch {
  constructor() {
    super();
    Object.assign(this, { claimMany: undefined });
  }
}

describe('claimMany scenarios on locks without batches', () => {
  it('a claimMany without capabilities.maxBatch is a declaration error', () => {
    expect(() => batchClaimerOf(new UndeclaredBatch())).toThrow(/declare maxBatch/);
  });

  it('a maxBatch without claimMany is a declaration error', () => {
    const lock = new NoBatch();
    Object.assign(lock, { capabilities: { ...lock.capabilities, maxBatch: 10 } });
    expect(() => batchClaimerOf(lock)).toThrow(/claimMany\(\) is missing/);
  });

  it('a lock without batches is reported skipped (not applicable), with a note', (ctx) => {
    const lock = new NoBatch();
    expect(batchClaimerOf(lock)).toBeNull();
    const notes: string[] = [];
    const skip = ctx.skip;
    Object.assign(ctx, {
      skip: (note: string) => {
        notes.push(note);
      },
    });
    try {
      reportNotApplicable({ name: 'plain', create: async () => ({}) as never } as never, lock);
    } finally {
      Object.assign(ctx, { skip });
    }
    expect(notes).toEqual([
      'not applicable: plain (memory) declares no capabilities.maxBatch (no claimMany)',
    ]);
  });
});
