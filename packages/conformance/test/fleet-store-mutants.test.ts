import { MemoryStore, type Store } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import {
  type FleetStoreScenarioName,
  fleetStoreScenarios,
  runRequestStoreScenarios,
} from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';
import {
  DecidesAnyTake,
  ForgetsDecider,
  ForgetsPausedBy,
  ListsOnlyRunJobs,
  NeverExpires,
  TakesHeldRequests,
  TakesTwice,
} from './mutants/fleet-store-mutants.js';

/** Each mutant breaks one fleet-control rule; the scenario for that rule must fail against it. */
const cases: [string, () => Store, FleetStoreScenarioName | RunRequestScenarioName, RegExp][] = [
  [
    '(f1) a run request consumed twice',
    () => new TakesTwice(),
    'runRequestsOnce',
    /more than once/,
  ],
  ['(f2) an instance never expiring', () => new NeverExpires(), 'registryExpiry', /disappear/],
  [
    '(f3) pause forgets who asked',
    () => new ForgetsPausedBy(),
    'pausedFromForeignProcess',
    /pausedBy/,
  ],
  [
    '(f4) listJobs misses a job paused from outside',
    () => new ListsOnlyRunJobs(),
    'pausedFromForeignProcess',
    /listJobs/,
  ],
  [
    '(f5) a decision by any take',
    () => new DecidesAnyTake(),
    'runRequestsLeased',
    /only the current take decides/,
  ],
  [
    '(f5b) a decision by any take, under racing takes',
    () => new DecidesAnyTake(),
    'runRequestsDecidedOnce',
    /more than one take/,
  ],
  [
    '(f6) a held request taken again',
    () => new TakesHeldRequests(),
    'runRequestsLeased',
    /a held request is not taken/,
  ],
  [
    '(f7) a retried decision answered false',
    () => new ForgetsDecider(),
    'runRequestsLeased',
    /retried decision/,
  ],
];

const scenarios = { ...fleetStoreScenarios, ...runRequestStoreScenarios };
type RunRequestScenarioName = keyof typeof runRequestStoreScenarios;

describe('the fleet-control store scenarios fail broken stores', () => {
  for (const [title, make, scenario, message] of cases) {
    it(`${title}: "${scenarios[scenario].title}" fails`, async () => {
      const create = memoryStoreFixture(make);
      await expect(
        scenarios[scenario].run({ name: 'mutant', create, timeScale: 0.5 }),
      ).rejects.toThrow(message);
    }, 60_000);
  }

  it('the same scenarios pass on the reference MemoryStore', async () => {
    const create = memoryStoreFixture(() => new MemoryStore());
    for (const [, , scenario] of cases) {
      await scenarios[scenario].run({ name: 'memory', create, timeScale: 0.5 });
    }
    expect(cases).toHaveLength(8);
  }, 60_000);
});
