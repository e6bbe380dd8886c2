/**
 * Alerts and notifiers: the {@link Alert} shape the fleet watchdog raises, the {@link Notifier}
 * contract, {@link callbackNotifier}, and {@link createAlertDelivery} (retries, timeouts,
 * visible failures).
 */
export {
  ALERT_KINDS,
  ALERT_SEVERITIES,
  type Alert,
  type AlertInput,
  type AlertKind,
  type AlertSeverity,
  type AlertState,
  alertId,
  alertKey,
  openAlert,
  resolveAlert,
} from './alert.js';
export {
  type AlertDelivery,
  type AlertDeliveryOptions,
  createAlertDelivery,
  DEFAULT_DELIVERY_ATTEMPTS,
  DEFAULT_DELIVERY_MAX_ELAPSED_MS,
  DEFAULT_DELIVERY_TIMEOUT_MS,
  type DeliveryFailure,
  type DeliveryResult,
} from './alert-delivery.js';
export { callbackNotifier } from './callback-notifier.js';
export type { AlertEvent, Notifier, NotifyOptions } from './notifier.js';
export { NotifyFailedError, NotifyTimeoutError } from './notify-errors.js';
