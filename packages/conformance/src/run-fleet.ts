import { InvalidOptionError } from '@fleetcron/core';
import { describe, it } from 'vitest';
import { fleetScenarios } from './fleet/scenarios.js';
import type { FleetConformanceOptions } from './types.js';

/**
 * Registers the fleet conformance suite: `describe(`${name} fleet conformance`)` with real
 * `Scheduler`s on the backend, in real time (about 3 minutes). Call it at the top level of a test
 * file.
 */
export function runFleetConformance(options: FleetConformanceOptions): void {
  if (options.timeScale !== undefined && !(options.timeScale > 0)) {
    throw new InvalidOptionError('timeScale', 'must be a positive number (1 = normal speed).');
  }
  if (options.fires !== undefined && !(Number.isInteger(options.fires) && options.fires > 0)) {
    throw new InvalidOptionError('fires', 'must be a positive integer.');
  }
  const scale = options.timeScale ?? 1;
  describe(`${options.name} fleet conformance`, () => {
    for (const scenario of Object.values(fleetScenarios)) {
      const timeout = scenario.timeoutMs * scale + (options.fires ?? 30) * 1000;
      it(scenario.title, () => scenario.run(options), timeout);
    }
  });
}
