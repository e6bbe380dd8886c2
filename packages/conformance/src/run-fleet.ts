import { InvalidOptionError } from '@fleetcron/core';
import { describe, it } from 'vitest';
import { fleetScenarios } from './fleet/scenarios.js';
import type { FleetConformanceOptions, FleetScenario } from './types.js';

/**
 * The fleet scenarios that `runFleetConformance` registers for `part` (see
 * {@link FleetConformanceOptions.part}): every `of`-th scenario in registration order, from the
 * `index`-th; all of them without `part`. Throws `InvalidOptionError` naming `part` when it is
 * malformed.
 */
export function fleetScenariosOfPart(part?: { index: number; of: number }): FleetScenario[] {
  const all: FleetScenario[] = Object.values(fleetScenarios);
  if (part === undefined) return all;
  const { index, of } = part;
  if (!(Number.isInteger(of) && of >= 2 && Number.isInteger(index) && index >= 1 && index <= of)) {
    throw new InvalidOptionError(
      'part',
      `must be { index, of } with integers of ≥ 2 and 1 ≤ index ≤ of, got ${JSON.stringify(part)}.`,
    );
  }
  return all.filter((_, i) => i % of === index - 1);
}

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
  const mine = fleetScenariosOfPart(options.part);
  describe(`${options.name} fleet conformance`, () => {
    for (const scenario of mine) {
      const timeout = scenario.timeoutMs * scale + (options.fires ?? 30) * 1000;
      it(scenario.title, () => scenario.run(options), timeout);
    }
  });
}
