import { InvalidOptionError } from '@fleetcron/core';
import { describe, it } from 'vitest';
import { restartManyScenarios } from './fleet/restart-many-scenarios.js';
import type { FleetConformanceOptions } from './types.js';

/** The name of one many-jobs restart scenario (`restartManyJobsLockOnly`, `restartManyJobsWithStore`). */
export type RestartScenarioName = keyof typeof restartManyScenarios;

/** Options of {@link runRestartConformance}. */
export interface RestartConformanceOptions
  extends Pick<FleetConformanceOptions, 'name' | 'create' | 'timeScale'> {
  /**
   * The backend's store for `restartManyJobsWithStore` (its children open their own clients
   * through `processStore` when the fixture has it); a `MemoryStore` in the test process, reached
   * over IPC, when left out.
   */
  store?: FleetConformanceOptions['store'];
  /**
   * Scenarios this backend is known to fail on the machine it is tested on, registered skipped
   * with the reason in the title (the report shows them): `{ restartManyJobsWithStore: '…' }`.
   */
  knownFailures?: Readonly<Partial<Record<RestartScenarioName, string>>>;
}

/**
 * Registers the many-jobs restart scenarios (`describe(`${name} restart conformance`)`): 4 child
 * processes × 2,000 jobs every 3 s, each on its own lock client, SIGKILLed together and
 * restarted across a fire so that the catch-up passes run into the next regular fire; lock only,
 * then with the store on. Judged from an append-only ledger: every later fire runs exactly once,
 * missed fires are handled as the catch-up policy says (and recorded once with the store on).
 *
 * They put 8 processes and 8,000 claims every 3 s on the machine, so they measure the backend
 * and the scheduler only when nothing else runs beside them: call this in a test file of its own
 * that runs alone (this repository's `test/serial/` files, run by `pnpm test` after every other
 * test file). About 30 s per scenario.
 */
export function runRestartConformance(options: RestartConformanceOptions): void {
  if (options.timeScale !== undefined && !(options.timeScale > 0)) {
    throw new InvalidOptionError('timeScale', 'must be a positive number (1 = normal speed).');
  }
  const known = restartKnownFailures(options);
  describe(`${options.name} restart conformance`, () => {
    for (const [name, scenario] of Object.entries(restartManyScenarios)) {
      const reason = known.get(name);
      if (reason !== undefined) {
        // declared, and shown in the report as skipped with its reason: never a silent pass
        it.skip(`${scenario.title} (known failure: ${reason})`, () => scenario.run(options));
        continue;
      }
      it(
        scenario.title,
        () => scenario.run(options),
        scenario.timeoutMs * (options.timeScale ?? 1),
      );
    }
  });
}

/**
 * `options.knownFailures` by scenario name; throws `InvalidOptionError` naming the entry when a
 * name is not a restart scenario's or a reason is empty.
 */
function restartKnownFailures(options: RestartConformanceOptions): Map<string, string> {
  const known = new Map<string, string>();
  for (const [name, reason] of Object.entries(options.knownFailures ?? {})) {
    if (!Object.hasOwn(restartManyScenarios, name)) {
      throw new InvalidOptionError(
        `knownFailures.${name}`,
        `is not a restart scenario; use ${Object.keys(restartManyScenarios).join(' or ')}.`,
      );
    }
    if (typeof reason !== 'string' || reason.trim() === '') {
      throw new InvalidOptionError(
        `knownFailures.${name}`,
        'must be a short reason (an issue number and what fails).',
      );
    }
    known.set(name, reason);
  }
  return known;
}
