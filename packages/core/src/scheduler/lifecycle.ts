/* The scheduler's lifecycle, as its users see it: its state, and how `stop()` is asked. */

/** Options of `Scheduler.stop()`. */
export interface StopOptions {
  /** How long to wait for running jobs before aborting them, ms. Default: the scheduler's `drainMs`. */
  drainMs?: number;
}

/** Lifecycle state of a `Scheduler`. */
export type SchedulerState = 'idle' | 'running' | 'stopping';
