/**
 * `@fleetcron/notify`: notifiers for fleetcron alerts over HTTP (a signed JSON webhook, a
 * Slack-style incoming webhook), the receiver's signature check, and the alert's text. E-mail is
 * `@fleetcron/notify-email`.
 *
 * @module @fleetcron/notify
 */
export { type AlertLink, alertSubject, alertText } from './alert-text.js';
export {
  DEFAULT_HTTP_TIMEOUT_MS,
  type HttpNotifierOptions,
} from './http-options.js';
export { retryableStatus } from './post-json.js';
export {
  DEFAULT_SIGNATURE_TOLERANCE_S,
  SIGNATURE_HEADER,
  type SignatureProblem,
  signWebhook,
  type VerifyWebhookInput,
  verifyWebhookSignature,
} from './signature.js';
export {
  SLACK_COLORS,
  type SlackNotifierOptions,
  slackMessage,
  slackNotifier,
} from './slack-notifier.js';
export {
  DELIVERY_HEADER,
  EVENT_HEADER,
  MIN_SECRET_LENGTH,
  type WebhookBody,
  type WebhookNotifierOptions,
  webhookNotifier,
} from './webhook-notifier.js';
