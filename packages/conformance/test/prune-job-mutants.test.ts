import { MemoryStore, type Store } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { storeScenarios } from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';
import {
  BeforeOverridesKeepLast,
  IgnoresLimit,
  PrefixScan,
  PrunesRunning,
  TiesByInsertion,
} from './mutants/prune-job-mutants.js';

/** Each mutant breaks one rule of pruneJob; the scenario must fail with the message. */
const cases: [string, new () => Store, RegExp][] = [
  ['(p1) running rows deleted', PrunesRunning, /oldest three candidates went/],
  ['(p2) limit ignored', IgnoresLimit, /limit 3 of 4 candidates/],
  ['(p3) ties on startedAt not ordered by id', TiesByInsertion, /oldest 99 went|newest 11/],
  ['(p4) a prefix scan takes other jobs', PrefixScan, /oldest three candidates went|untouched/],
  ['(p5) before alone when both given', BeforeOverridesKeepLast, /keepLast prunes past before/],
];

describe('the pruneJob store scenario', () => {
  for (const [title, Mutant, message] of cases) {
    it(`${title}: pruneJobBounded fails`, async () => {
      const create = memoryStoreFixture(() => new Mutant());
      await expect(storeScenarios.pruneJobBounded.run({ name: 'mutant', create })).rejects.toThrow(
        message,
      );
    });
  }

  it('passes on the reference MemoryStore', async () => {
    const create = memoryStoreFixture(() => new MemoryStore());
    await storeScenarios.pruneJobBounded.run({ name: 'memory', create });
    expect(new MemoryStore().pruneJob).toBeTypeOf('function');
  });
});
