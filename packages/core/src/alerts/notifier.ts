import type { Alert } from './alert.js';

/** What a notifier is told: an alert was `opened` or `resolved`. */
export interface AlertEvent {
  /** `opened` when the alert was raised, `resolved` when its condition cleared. */
  readonly action: 'opened' | 'resolved';
  /** The alert, in its state after the action. */
  readonly alert: Alert;
}

/** What {@link Notifier.notify} receives beside the event. */
export interface NotifyOptions {
  /**
   * Aborted when this attempt's time is up or delivery is stopped; a notifier passes it to its
   * client (`fetch`, the SMTP connection) so the attempt ends promptly.
   */
  readonly signal: AbortSignal;
}

/**
 * Where alerts go: a webhook, a chat channel, e-mail, a function. `notify` resolves when the
 * receiver accepted the event and rejects when it did not; retries, timeouts and reporting of
 * failures are the delivery's job (`createAlertDelivery`), not the notifier's.
 */
export interface Notifier {
  /** Short name for events and logs, e.g. `webhook`, `slack`, `email`. */
  readonly name: string;
  /** Delivers one event once; rejects on failure. Must honour `signal`. */
  notify(event: AlertEvent, options: NotifyOptions): Promise<void>;
}
