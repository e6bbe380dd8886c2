import { type AlertEvent, InvalidOptionError, type Notifier } from '@fleetcron/core';
import { type HttpNotifierOptions, parseHttpOptions } from './http-options.js';
import { postJson } from './post-json.js';
import { SIGNATURE_HEADER, signWebhook } from './signature.js';

/** Shortest secret accepted, characters. */
export const MIN_SECRET_LENGTH = 16;

/** Header naming the event: `alert.opened` or `alert.resolved`. */
export const EVENT_HEADER = 'x-fleetcron-event';

/** Header naming this delivery, the same on every retry: `<alert id>.<action>` (deduplicate on it). */
export const DELIVERY_HEADER = 'x-fleetcron-delivery';

/** Options of {@link webhookNotifier}. */
export interface WebhookNotifierOptions extends HttpNotifierOptions {
  /**
   * Shared secret (at least 16 characters) for the `x-fleetcron-signature` header. Without one the
   * requests are unsigned (only for receivers on a trusted network).
   */
  secret?: string;
  /** Now, epoch ms, for the signature's timestamp. Default `Date.now`. */
  now?: () => number;
}

/** The JSON body a webhook receives. */
export interface WebhookBody {
  /** Body format version; 1. */
  version: 1;
  /** `opened` or `resolved`. */
  action: AlertEvent['action'];
  /** The alert (see `Alert` in `@fleetcron/core`). */
  alert: AlertEvent['alert'];
  /** The link from the `link` option, when it gave one. */
  link?: string;
}

/**
 * A {@link Notifier} that POSTs each event as JSON ({@link WebhookBody}) to `url`, signed with
 * HMAC-SHA256 over the timestamp and the body when a `secret` is given. A 2xx answer is success;
 * 408, 429, 5xx and network failures are retryable; other statuses are not. Wrap it in
 * `createAlertDelivery` for retries.
 *
 * @throws InvalidOptionError (fields `webhook.*`) for bad options.
 */
export function webhookNotifier(options: WebhookNotifierOptions): Notifier {
  const { url, name, timeoutMs, headers, link } = parseHttpOptions('webhook', options);
  const { secret, now = Date.now } = options;
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH)) {
    throw new InvalidOptionError(
      'webhook.secret',
      `must be a string of at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32), or left out for unsigned requests.`,
    );
  }
  if (typeof now !== 'function') {
    throw new InvalidOptionError('webhook.now', 'must be a function returning epoch ms.');
  }
  return {
    name,
    async notify(event, { signal }) {
      const payload: WebhookBody = { version: 1, action: event.action, alert: event.alert };
      const href = link?.(event.alert);
      if (href) payload.link = href;
      const body = JSON.stringify(payload);
      const sent: Record<string, string> = {
        ...headers,
        [EVENT_HEADER]: `alert.${event.action}`,
        [DELIVERY_HEADER]: `${event.alert.id}.${event.action}`,
      };
      if (secret !== undefined) {
        sent[SIGNATURE_HEADER] = signWebhook(body, secret, Math.floor(now() / 1000));
      }
      await postJson(name, url, body, sent, signal, timeoutMs);
    },
  };
}
