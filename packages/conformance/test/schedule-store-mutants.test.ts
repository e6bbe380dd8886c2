import { MemoryStore, type Store } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { type ScheduleStoreScenarioName, scheduleStoreScenarios } from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';
import {
  ChecksThenWrites,
  ForgetsTombstones,
  KeepsVersion,
} from './mutants/schedule-store-mutants.js';

/** Each mutant breaks one stored-schedule rule; the scenario for that rule must fail against it. */
const cases: [string, () => Store, ScheduleStoreScenarioName, RegExp][] = [
  [
    '(sc1) a removed id forgets its version',
    () => new ForgetsTombstones(),
    'scheduleRoundTrip',
    /continues past/,
  ],
  [
    '(sc2) the version check and the write are two steps',
    () => new ChecksThenWrites(),
    'concurrentScheduleUpdates',
    /exactly one/,
  ],
  [
    '(sc3) a replace does not move the version',
    () => new KeepsVersion(),
    'changeWhileOldFireRuns',
    /version 2/,
  ],
];
const unsupported = { unsupported: 'in-process store' };

describe('the stored-schedule scenarios fail broken stores', () => {
  for (const [title, make, scenario, message] of cases) {
    it(`${title}: "${scheduleStoreScenarios[scenario].title}" fails`, async () => {
      const create = memoryStoreFixture(make);
      await expect(
        scheduleStoreScenarios[scenario].run({
          name: 'mutant',
          create,
          dropPush: unsupported,
          timeScale: 0.5,
        }),
      ).rejects.toThrow(message);
    }, 60_000);
  }

  it('the same scenarios pass on the reference MemoryStore', async () => {
    const create = memoryStoreFixture(() => new MemoryStore());
    for (const [, , scenario] of cases) {
      await scheduleStoreScenarios[scenario].run({ name: 'memory', create, dropPush: unsupported });
    }
    expect(cases).toHaveLength(3);
  }, 60_000);
});
