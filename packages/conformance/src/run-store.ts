import { InvalidOptionError } from '@fleetcron/core';
import { describe, it } from 'vitest';
import { storeScenarios } from './store/scenarios.js';
import type { StoreConformanceOptions } from './types.js';

/**
 * Registers the store conformance suite: `describe(`${name} store conformance`)` with one `it`
 * per scenario (see the package README). Call it at the top level of a test file.
 */
export function runStoreConformance(options: StoreConformanceOptions): void {
  if (options.timeScale !== undefined && !(options.timeScale > 0)) {
    throw new InvalidOptionError('timeScale', 'must be a positive number (1 = normal speed).');
  }
  const scale = options.timeScale ?? 1;
  describe(`${options.name} store conformance`, () => {
    for (const scenario of Object.values(storeScenarios)) {
      it(scenario.title, () => scenario.run(options), scenario.timeoutMs * scale);
    }
  });
}
