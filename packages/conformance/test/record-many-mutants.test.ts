import type { Store } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { type StoreScenarioName, storeScenarios } from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';
import {
  AppliesBatchReversed,
  KeepsFirstStartedAt,
  MergesLastWrite,
  OutcomeFromBatchEnd,
  RecordsEachInOrder,
  WritesUntilInvalid,
} from './mutants/record-many-mutants.js';

type StoreClass = new () => Store;

/** Each mutant breaks one rule of recordMany; the scenario named must fail with the message. */
const cases: [string, StoreClass, StoreScenarioName, RegExp][] = [
  [
    '(r1) the last write of an id in a batch wins',
    MergesLastWrite,
    'recordManyAsRecord',
    /a second outcome dropped \(the first outcome wins\)/,
  ],
  [
    '(r1) the same, seen by the jumbled sequence',
    MergesLastWrite,
    'recordManyMatchesRecord',
    /written by recordMany equals record's/,
  ],
  [
    "(r2) the job's last outcome from the batch's last terminal write, even a dropped one",
    OutcomeFromBatchEnd,
    'recordManyAsRecord',
    /leaves the job last outcome alone/,
  ],
  [
    '(r3) a bad execution leaves the ones before it written',
    WritesUntilInvalid,
    'recordManyAsRecord',
    /a batch that failed its checks wrote nothing/,
  ],
  [
    '(r4) the startedAt of an id written twice in a batch does not move',
    KeepsFirstStartedAt,
    'recordManyAsRecord',
    /moved inside one batch/,
  ],
  [
    '(r5) the batch applied in reverse order',
    AppliesBatchReversed,
    'recordManyAsRecord',
    /a second outcome dropped \(the first outcome wins\)/,
  ],
  [
    '(r5) the same, seen by the jumbled sequence',
    AppliesBatchReversed,
    'recordManyMatchesRecord',
    /written by recordMany equals record's/,
  ],
];

describe('the recordMany store scenarios', () => {
  for (const [title, Store, scenario, message] of cases) {
    it(`${title}: ${scenario} fails`, async () => {
      const create = memoryStoreFixture(() => new Store());
      await expect(storeScenarios[scenario].run({ name: 'mutant', create })).rejects.toThrow(
        message,
      );
    });
  }

  for (const scenario of ['recordManyAsRecord', 'recordManyMatchesRecord'] as const) {
    it(`${scenario} passes on MemoryStore with recordMany as record of each`, async () => {
      const create = memoryStoreFixture(() => new RecordsEachInOrder());
      await storeScenarios[scenario].run({ name: 'reference', create });
      expect(typeof new RecordsEachInOrder().recordMany).toBe('function');
    });
  }
});
