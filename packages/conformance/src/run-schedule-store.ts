import { InvalidOptionError } from '@fleetcron/core';
import { describe, it } from 'vitest';
import {
  type ScheduleStoreConformanceOptions,
  scheduleStoreScenarios,
} from './store/schedule-scenarios.js';

/**
 * Registers the stored-schedule conformance suite: `describe(`${name} schedule store
 * conformance`)` with one `it` per scenario. The lost-notification scenario is registered
 * skipped, with the reason in its title, when `dropPush` says the backend has no push connection.
 */
export function runScheduleStoreConformance(options: ScheduleStoreConformanceOptions): void {
  if (options.timeScale !== undefined && !(options.timeScale > 0)) {
    throw new InvalidOptionError('timeScale', 'must be a positive number (1 = normal speed).');
  }
  const scale = options.timeScale ?? 1;
  describe(`${options.name} schedule store conformance`, () => {
    for (const [name, scenario] of Object.entries(scheduleStoreScenarios)) {
      const drop = options.dropPush;
      if (name === 'lostScheduleNotification' && typeof drop !== 'function') {
        it.skip(`${scenario.title} (not applicable: ${drop.unsupported})`, () => {});
        continue;
      }
      it(scenario.title, () => scenario.run(options), scenario.timeoutMs * scale);
    }
  });
}
