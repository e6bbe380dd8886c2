import { InvalidOptionError } from '@fleetcron/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { electorApiScenarios } from './api-scenarios.js';
import { electorScenarioOptions } from './capabilities.js';
import { electorFaultScenarios } from './fault-scenarios.js';
import { electorFreezeScenarios } from './freeze-scenarios.js';
import { electorRunScenarios } from './run-scenarios.js';
import type { ElectorConformanceOptions, ElectorFaults, RunnableElectorScenario } from './types.js';

/** Every scenario that needs no dedicated server, in registration order. */
export const electorScenarios = {
  ...electorApiScenarios,
  ...electorRunScenarios,
  ...electorFreezeScenarios,
} as const satisfies Record<string, RunnableElectorScenario>;

/**
 * Registers the elector conformance suite: `describe(`${name} elector conformance`)` with one
 * `it` per scenario (about 40 s in real time, plus the fault scenarios on a dedicated server).
 * Call it at the top level of a test file.
 */
export function runElectorConformance(options: ElectorConformanceOptions): void {
  if (options.faults && options.inProcess) {
    throw new InvalidOptionError(
      'inProcess',
      'an in-process backend has no server to break: pass either faults or inProcess, not both.',
    );
  }
  if (options.timeScale !== undefined && !(options.timeScale > 0)) {
    throw new InvalidOptionError('timeScale', 'must be a positive number (1 = normal speed).');
  }
  const scale = options.timeScale ?? 1;
  describe(`${options.name} elector conformance`, () => {
    for (const scenario of Object.values(electorScenarios)) {
      it(scenario.title, () => scenario.run(options), scenario.timeoutMs * scale);
    }
    describe('faults', () => {
      let faults: ElectorFaults | null = null;
      beforeAll(async () => {
        if (options.faults) faults = await options.faults();
      }, 120_000 * scale);
      afterAll(async () => {
        await faults?.close?.();
      }, 60_000 * scale);
      for (const scenario of Object.values(electorFaultScenarios)) {
        it(
          scenario.title,
          async () => {
            if (faults) {
              await scenario.run(options, faults);
              return;
            }
            expect(
              options.inProcess,
              `${options.name}: pass faults (a dedicated server from @fleetcron/testkit) so "${scenario.title}" can run; only an in-process backend may declare inProcess: true instead`,
            ).toBe(true);
            const { capabilities } = await electorScenarioOptions(options);
            expect(capabilities.durable, 'an in-process backend is not durable').toBe(false);
          },
          scenario.timeoutMs * scale,
        );
      }
    });
  });
}
