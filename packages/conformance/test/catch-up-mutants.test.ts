import { MemoryLock } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import {
  type LockConformanceOptions,
  lockScenarios,
  type RunnableLockScenario,
} from '../src/index.js';
import { type MemoryLockClass, memoryLockFixture } from './memory-fixture.js';
import { CatchUpIgnoresMark, MarkMovesBackwards } from './mutants/catch-up-mutants.js';

const options = (Lock: MemoryLockClass): LockConformanceOptions => ({
  name: 'mutant',
  create: memoryLockFixture(Lock),
  inProcess: true,
});

const { catchUpMarksNewestFire, catchUpJudgedByMark } = lockScenarios;

const cases: [string, MemoryLockClass, RunnableLockScenario, RegExp][] = [
  [
    '(c1) a catch-up claim ignores the mark',
    CatchUpIgnoresMark,
    catchUpJudgedByMark,
    /a re-sent catch-up claim gets the same lease|a second catch-up claim of the same fire/,
  ],
  [
    '(c2) the mark moves backwards (last, not newest)',
    MarkMovesBackwards,
    catchUpMarksNewestFire,
    /an older fire claimed later leaves the newest/,
  ],
  [
    '(c2) the mark moves backwards, seen by catch-up claims',
    MarkMovesBackwards,
    catchUpJudgedByMark,
    /the mark stays on the newest fire/,
  ],
];

describe('the catch-up scenarios fail broken marks', () => {
  for (const [title, Lock, scenario, message] of cases) {
    it(`${title}: "${scenario.title}" fails`, async () => {
      await expect(scenario.run(options(Lock))).rejects.toThrow(message);
    }, 60_000);
  }

  it('pass on the reference MemoryLock', async () => {
    await catchUpMarksNewestFire.run(options(MemoryLock));
    await catchUpJudgedByMark.run(options(MemoryLock));
    expect(cases).toHaveLength(3);
  }, 60_000);
});
