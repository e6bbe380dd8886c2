import { describe, expect, it } from 'vitest';
import { type CandidateModule, electorScenarios } from '../src/index.js';
import { memoryElectorFixture } from './elector/memory-elector-fixture.js';
import { RenewsAnyTerm, ReusesTerms } from './elector/mutants.js';

const neverAborts: CandidateModule = {
  url: new URL('./elector/mutants.ts', import.meta.url).href,
  exportName: 'neverAborts',
};

/** Each mutant, the scenario that must catch it, and the rule it must report broken. */
const cases: [
  string,
  keyof typeof electorScenarios,
  () => Parameters<(typeof electorScenarios)['termsIncrease']['run']>[0],
  RegExp,
][] = [
  [
    'no term check (renew/resign act on any term)',
    'staleTerm',
    () => ({
      name: 'mutant',
      create: memoryElectorFixture(() => new RenewsAnyTerm()),
    }),
    /renewing an expired, replaced term/,
  ],
  [
    'terms that do not increase',
    'termsIncrease',
    () => ({ name: 'mutant', create: memoryElectorFixture(() => new ReusesTerms()) }),
    /new, higher term|terms strictly increase/,
  ],
  [
    'terms that do not increase',
    'skewedChurn',
    () => ({ name: 'mutant', create: memoryElectorFixture(() => new ReusesTerms()) }),
    /distinct terms|terms must strictly increase/,
  ],
  [
    'a leader that does not abort on loss',
    'leaderProcessStopped',
    () => ({
      name: 'mutant',
      create: memoryElectorFixture(),
      candidate: neverAborts,
    }),
    /never acts under term \d+ after the thaw/,
  ],
  [
    'a leader that does not abort on loss',
    'leaderLoopBlocked',
    () => ({
      name: 'mutant',
      create: memoryElectorFixture(),
      candidate: neverAborts,
    }),
    /never acts under term \d+ after the thaw/,
  ],
  [
    'a leader that does not abort on loss',
    'resignHandsOver',
    () => ({
      name: 'mutant',
      create: memoryElectorFixture(),
      candidate: neverAborts,
    }),
    /signal is aborted synchronously by resign/,
  ],
];

describe('the elector suite fails broken electors and candidates', () => {
  for (const [mutant, scenario, options, message] of cases) {
    it(`${mutant}: "${electorScenarios[scenario].title}" fails`, async () => {
      await expect(electorScenarios[scenario].run(options())).rejects.toThrow(message);
    }, 60_000);
  }
});
