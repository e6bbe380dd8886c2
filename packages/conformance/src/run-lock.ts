import { InvalidOptionError } from '@fleetcron/core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { assertNoServer, lockFaultScenarios, resolveFaults } from './lock/faults.js';
import { lockScenarios } from './lock/scenarios.js';
import type { LockConformanceOptions, LockFaults } from './types.js';

/**
 * Registers the lock conformance suite: `describe(`${name} lock conformance`)` with one `it` per
 * scenario (see the package README for the list). Call it at the top level of a test file.
 *
 * Fault scenarios run on `options.faults` (a dedicated server). Without `faults` they are still
 * registered and fail, unless the adapter declares `inProcess: true` (no server to break).
 */
export function runLockConformance(options: LockConformanceOptions): void {
  validate(options);
  const scale = options.timeScale ?? 1;
  describe(`${options.name} lock conformance`, () => {
    for (const scenario of Object.values(lockScenarios)) {
      it(scenario.title, () => scenario.run(options), scenario.timeoutMs * scale);
    }
    describe('faults', () => {
      let faults: LockFaults | null = null;
      beforeAll(async () => {
        faults = await resolveFaults(options);
      }, 120_000 * scale);
      afterAll(async () => {
        await faults?.close?.();
      }, 60_000 * scale);
      for (const scenario of Object.values(lockFaultScenarios)) {
        it(
          scenario.title,
          async () => {
            if (faults) await scenario.run(options, faults);
            else assertNoServer(options, scenario.title);
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
}
