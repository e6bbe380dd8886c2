import { InvalidOptionError } from '@fleetcron/core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { lockScenarioOptions } from './lock/capabilities.js';
import { assertNoServer, lockFaultScenarios, resolveFaults } from './lock/faults.js';
import { lockScenarios } from './lock/scenarios.js';
import type { LockConformanceOptions, LockFaults } from './types.js';

/**
 * Registers the lock conformance suite: `describe(`${name} lock conformance`)` with one `it` per
 * scenario (see the package README for the list). Call it at the top level of a test file.
 * The suite reads what the backend can do from `lock.capabilities` of the locks `create()` makes.
 *
 * Fault scenarios run on `options.faults` (a dedicated server). Without `faults` they are still
 * registered and fail, unless the adapter declares `inProcess: true` (no server to break).
 */
export function runLockConformance(options: LockConformanceOptions): void {
  validate(options);
  const scale = options.timeScale ?? 1;
  const chosen = <T>(scenarios: Record<string, T>): T[] =>
    Object.entries(scenarios)
      .filter(([name]) => !options.only || options.only.includes(name))
      .map(([, scenario]) => scenario);
  const faultScenarios = chosen(lockFaultScenarios);
  describe(`${options.name} lock conformance`, () => {
    for (const scenario of chosen(lockScenarios)) {
      it(scenario.title, () => scenario.run(options), scenario.timeoutMs * scale);
    }
    if (faultScenarios.length === 0) return;
    describe('faults', () => {
      let faults: LockFaults | null = null;
      beforeAll(async () => {
        faults = await resolveFaults(options);
      }, 120_000 * scale);
      afterAll(async () => {
        await faults?.close?.();
      }, 60_000 * scale);
      for (const scenario of faultScenarios) {
        it(
          scenario.title,
          async () => {
            if (faults) await scenario.run(options, faults);
            else assertNoServer(await lockScenarioOptions(options), scenario.title);
          },
          scenario.timeoutMs * scale,
        );
      }
    });
  });
}

function validate(options: LockConformanceOptions): void {
  if (options.faults && options.inProcess) {
    throw new InvalidOptionError(
      'inProcess',
      'an in-process backend has no server to break: pass either faults or inProcess, not both.',
    );
  }
  if (options.timeScale !== undefined && !(options.timeScale > 0)) {
    throw new InvalidOptionError('timeScale', 'must be a positive number (1 = normal speed).');
  }
  const known = [...Object.keys(lockScenarios), ...Object.keys(lockFaultScenarios)];
  for (const name of options.only ?? []) {
    if (!known.includes(name)) {
      throw new InvalidOptionError(
        'only',
        `has no scenario ${JSON.stringify(name)}; use names of lockScenarios or lockFaultScenarios (${known.join(', ')}).`,
      );
    }
  }
  if (options.only?.length === 0) {
    throw new InvalidOptionError('only', 'lists no scenario; leave it out to run them all.');
  }
}
