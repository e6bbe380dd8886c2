/**
 * The fleet watchdog: a job that judges the fleet's history once fleet-wide per fire and
 * notifies failed runs, missed fires and overdue jobs.
 */
export { fleetWatchdog } from './fleet-watchdog.js';
export {
  failedRunAlerts,
  lateRunAlerts,
  missedFiresAlert,
  type OverdueState,
  overdueAt,
  overdueEvent,
  type WatchSpan,
} from './watchdog-conditions.js';
export { WatchdogDeliveryError } from './watchdog-delivery-error.js';
export {
  DEFAULT_WATCHDOG_EVERY_MS,
  DEFAULT_WATCHDOG_JOB_NAME,
  DEFAULT_WATCHDOG_SETTLE_MS,
  type FleetWatchdogOptions,
  WATCHDOG_MAX_LOOKBACK_MS,
  WATCHDOG_PAGE,
} from './watchdog-options.js';
