import { describe, expect, it } from 'vitest';
import { type FleetInstanceModule, fleetScenarios } from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

/** A scheduler with no lease deadline at all (see ./fleet/naive-scheduler.ts). */
const naive: FleetInstanceModule = {
  url: new URL('./fleet/naive-scheduler.ts', import.meta.url).href,
  exportName: 'naiveInstance',
};

/** Each freeze scenario, and the rule it must report broken by the naive scheduler. */
const cases: [keyof typeof fleetScenarios, RegExp][] = [
  ['processFrozenInClaim', /started \d+ ms after sending its claim, past its \d+ ms lease/],
  ['processFrozenBeforeStart', /started \d+ ms after sending its claim, past its \d+ ms lease/],
  ['processFrozenInJob', /recorded succeeded, but its job ended \d+ ms past its lease deadline/],
  ['loopBlockedInClaim', /started \d+ ms after sending its claim, past its \d+ ms lease/],
  ['loopBlockedBeforeStart', /started \d+ ms after sending its claim, past its \d+ ms lease/],
  ['loopBlockedInJob', /recorded succeeded, but its job ended \d+ ms past its lease deadline/],
];

describe('the fleet freeze scenarios fail a scheduler without deadline checks', () => {
  for (const [name, message] of cases) {
    it(`${name}: "${fleetScenarios[name].title}" fails`, async () => {
      await expect(
        fleetScenarios[name].run({ name: 'naive', create: memoryLockFixture(), instance: naive }),
      ).rejects.toThrow(message);
    }, 90_000);
  }
});
