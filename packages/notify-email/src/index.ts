/**
 * `@fleetcron/notify-email`: e-mail notifications of fleetcron alerts over SMTP, with nodemailer.
 *
 * @module @fleetcron/notify-email
 */
export {
  DEFAULT_SMTP_TIMEOUT_MS,
  type EmailNotifierOptions,
  emailNotifier,
} from './email-notifier.js';
