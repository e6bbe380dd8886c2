import type { TriggerSpec } from './registry.js';

/**
 * A Trigger computes fire times. It must be pure: the same `after` gives the same answer on
 * every instance, whatever the process's time zone or start time.
 */
export interface Trigger {
  /** The first fire strictly after `after`, or `null` when there is none (an `at()` that passed). */
  next(after: Date): Date | null;
  /** A short human description, e.g. `cron(*\/5 * * * * UTC)`, used in logs and errors. */
  describe(): string;
  /**
   * The trigger as JSON, so any process can rebuild it (`triggerFromSpec`): set by the built-in
   * triggers, absent on custom ones (the fleet view then shows only the description).
   */
  readonly spec?: TriggerSpec;
}
