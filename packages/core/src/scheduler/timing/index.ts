/**
 * Time for the scheduler: its one timer queue (wall-clock and monotonic entries on one timer),
 * the watch on the fleet's clock, bounded waits and lease deadlines, and the give-up signal a
 * fire's claim path reads. Nothing here knows about jobs or locks.
 */
export { ClockWatch, DEFAULT_CLOCK_SKEW_WARN_MS } from './clock-watch.js';
export { abortMarginMs, LeaseDeadline, settledWithin, settleWithin } from './deadline.js';
export type { GiveUpSignal } from './give-up.js';
export { GiveUp } from './give-up.js';
export type { QueueEntry } from './timer-queue.js';
export { TimerQueue } from './timer-queue.js';
export type { TimerSource } from './timer-source.js';
