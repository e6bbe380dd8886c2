// Run requests exactly once under faults of their taker (issue #29), on the memory lock: see
// `runRequestFaultScenarios` for why they are not registered for every lock. Each scenario holds
// its own assertions; its mutants are in fleet-control-mutants.test.ts.
import { describe, it } from 'vitest';
import { runRequestFaultScenarios } from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

describe('run requests exactly once, taker faults (memory lock, real processes)', () => {
  for (const scenario of Object.values(runRequestFaultScenarios)) {
    it(
      scenario.title,
      () => scenario.run({ name: 'memory', create: memoryLockFixture() }),
      150_000,
    );
  }
});
