import { MemoryLock } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { type LockConformanceOptions, lockScenarios } from '../src/index.js';
import { type MemoryLockClass, memoryLockFixture } from './memory-fixture.js';
import {
  WithdrawIgnoresLeaseToken,
  WithdrawIgnoresRecordToken,
  WithdrawKeepsRecord,
} from './mutants/withdraw-mutants.js';

const options = (Lock: MemoryLockClass): LockConformanceOptions => ({
  name: 'mutant',
  create: memoryLockFixture(Lock),
  inProcess: true,
});

const cases: [string, MemoryLockClass, RegExp][] = [
  ['(w1) withdraw keeps the claim record', WithdrawKeepsRecord, /no claim record after withdraw/],
  [
    '(w2) withdraw clears a live lease of another token',
    WithdrawIgnoresLeaseToken,
    /live lease of the newer token stays/,
  ],
  [
    '(w3) withdraw ignores the record token',
    WithdrawIgnoresRecordToken,
    /withdraw with a foreign token/,
  ],
];

describe('the withdraw scenario fails broken withdraws', () => {
  for (const [title, Lock, message] of cases) {
    it(`${title}: "${lockScenarios.withdrawHandsBack.title}" fails`, async () => {
      await expect(lockScenarios.withdrawHandsBack.run(options(Lock))).rejects.toThrow(message);
    }, 60_000);
  }

  it('passes on the reference MemoryLock', async () => {
    await lockScenarios.withdrawHandsBack.run(options(MemoryLock));
    expect(cases).toHaveLength(3);
  }, 60_000);
});
