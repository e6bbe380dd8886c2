import { MemoryLock, MemoryStore } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import {
  fleetScenarios,
  type LockConformanceOptions,
  type LockScenarioName,
  lockScenarios,
  storeScenarios,
} from '../src/index.js';
import { type MemoryLockClass, memoryLockFixture, memoryStoreFixture } from './memory-fixture.js';
import {
  EarlyOnlyBeyondWindow,
  ForgetsClaimOnRelease,
  HighWaterMark,
  NeverCollects,
  NoBackendTime,
  OldestFirstStore,
  ReleaseIgnoresToken,
  ReopensFinished,
  SplitsErrorText,
  TokensRepeat,
} from './mutants/mutants.js';

/** Each mutant breaks one rule; the scenario named for that rule must fail against it. */
const cases: [string, MemoryLockClass, LockScenarioName, RegExp][] = [
  [
    '(a) deletes the claim record on release',
    ForgetsClaimOnRelease,
    'lateClaimerLoses',
    /late claimer/,
  ],
  ['(b) plain high-water mark', HighWaterMark, 'outOfOrderFires', /high-water mark/],
  [
    '(c) release ignores the token',
    ReleaseIgnoresToken,
    'staleReleaseIgnored',
    /old token|stale release/,
  ],
  ['(d) tokens repeat', TokensRepeat, 'tokensIncrease', /strictly increase/],
  ['(e) never collects claim records', NeverCollects, 'boundedStorage', /records held|collected/],
  [
    '(f) early only beyond the whole window',
    EarlyOnlyBeyondWindow,
    'earlyByBackendClock',
    /further ahead than the tolerance/,
  ],
  ['(g) no backend time in answers', NoBackendTime, 'earlyByBackendClock', /backend's time/],
];

const options = (Lock: MemoryLockClass): LockConformanceOptions => ({
  name: 'mutant',
  create: memoryLockFixture(Lock),
  inProcess: true,
});

describe('the lock suite fails broken locks', () => {
  for (const [title, Lock, scenario, message] of cases) {
    it(`${title}: "${lockScenarios[scenario].title}" fails`, async () => {
      await expect(lockScenarios[scenario].run(options(Lock))).rejects.toThrow(message);
    }, 60_000);
  }

  it('the same scenarios pass on the reference MemoryLock', async () => {
    for (const [, , scenario] of cases) {
      if (scenario !== 'boundedStorage') await lockScenarios[scenario].run(options(MemoryLock));
    }
    expect(cases).toHaveLength(7);
  });
});

describe('the store suite fails broken stores', () => {
  it('(s1) history oldest first: the pagination scenario fails', async () => {
    const create = memoryStoreFixture(() => new OldestFirstStore());
    await expect(storeScenarios.historyPagination.run({ name: 's1', create })).rejects.toThrow(
      /newest first/,
    );
  });
  it('(s2) error text cut mid-character: the error-text scenario fails', async () => {
    const create = memoryStoreFixture(() => new SplitsErrorText());
    await expect(storeScenarios.errorTextBounded.run({ name: 's2', create })).rejects.toThrow(
      /boundErrorText/,
    );
  });
  it('(s3) a late running write reopens a finished row: the late-running scenario fails', async () => {
    const create = memoryStoreFixture(() => new ReopensFinished());
    await expect(storeScenarios.lateRunningWrite.run({ name: 's3', create })).rejects.toThrow(
      /keeps its terminal status/,
    );
  });
  it('the same scenarios pass on the reference MemoryStore', async () => {
    const create = memoryStoreFixture(() => new MemoryStore());
    await storeScenarios.historyPagination.run({ name: 'memory', create });
    await storeScenarios.errorTextBounded.run({ name: 'memory', create });
    await storeScenarios.lateRunningWrite.run({ name: 'memory', create });
    expect(create).toBeTypeOf('function');
  });
});

describe('the fleet suite fails a broken fixture', () => {
  it('clients that do not share one namespace: the skewed fleet runs fires twice', async () => {
    const isolatedClients = async () => {
      const fixture = await memoryLockFixture()();
      return { ...fixture, newLock: async () => new MemoryLock() };
    };
    await expect(
      fleetScenarios.skewedFleetExactlyOnce.run({
        name: 'isolated',
        create: isolatedClients,
        fires: 3,
      }),
    ).rejects.toThrow(/ran on/);
  }, 60_000);
});
