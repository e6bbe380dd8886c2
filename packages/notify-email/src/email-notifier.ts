import {
  type AlertEvent,
  InvalidOptionError,
  type Notifier,
  NotifyFailedError,
} from '@fleetcron/core';
import { assertNonEmptyString, assertPositiveMs } from '@fleetcron/core/backend';
import { type AlertLink, alertSubject, alertText } from '@fleetcron/notify';
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';

/** Default bound of connecting, the greeting and any socket silence, ms. */
export const DEFAULT_SMTP_TIMEOUT_MS = 10_000;

/** Options of {@link emailNotifier}. */
export interface EmailNotifierOptions {
  /**
   * Where to send: SMTP options as nodemailer takes them (`{ host, port, secure, auth }`), an SMTP
   * URL (`smtps://user:pass@smtp.example.com`), or a nodemailer transporter you built.
   */
  transport: SMTPTransport.Options | string | Transporter;
  /** Sender address, e.g. `fleetcron <alerts@example.com>`. */
  from: string;
  /** Recipient address or addresses. */
  to: string | string[];
  /** Name in events and logs. Default `email`. */
  name?: string;
  /**
   * Bound of connecting, of the server's greeting and of any silence on the socket, ms (nodemailer's
   * `connectionTimeout`, `greetingTimeout`, `socketTimeout`), for transports built from options
   * or a URL. Default 10000.
   */
  timeoutMs?: number;
  /** Subject line. Default `alertSubject(event)` from `@fleetcron/notify`. */
  subject?: (event: AlertEvent) => string;
  /** A link to put at the end of the body, e.g. to the console. */
  link?: AlertLink;
}

/** The fields nodemailer's errors carry. */
interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

/** Maps a nodemailer failure to `NotifyFailedError`: SMTP 5xx is permanent, the rest retryable. */
function failure(name: string, error: unknown): NotifyFailedError {
  const smtp = (error ?? {}) as SmtpError;
  const status = typeof smtp.responseCode === 'number' ? smtp.responseCode : undefined;
  const what =
    status === undefined
      ? `${smtp.code ?? 'send failed'}: ${smtp.message ?? String(error)}`
      : `SMTP ${status}: ${smtp.response ?? smtp.message}`;
  return new NotifyFailedError(name, what, {
    retryable: status === undefined || status < 500,
    status,
    cause: error,
  });
}

/**
 * A {@link Notifier} that e-mails each event as plain text over SMTP with nodemailer: the subject
 * names state, severity, kind and job; the body lists the alert's fields and details. A 4xx reply
 * or a connection failure is retryable, a 5xx reply is not. Wrap it in `createAlertDelivery`.
 *
 * nodemailer cannot cancel a message in flight: an attempt the delivery abandons at its
 * `timeoutMs` ends at the latest when the socket has been silent for this notifier's `timeoutMs`.
 *
 * @throws InvalidOptionError (fields `email.*`) for bad options.
 */
export function emailNotifier(options: EmailNotifierOptions): Notifier {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError(
      'email',
      'pass options, e.g. { transport: { host, port }, from, to }.',
    );
  }
  const {
    transport,
    from,
    to,
    name = 'email',
    timeoutMs = DEFAULT_SMTP_TIMEOUT_MS,
    subject = alertSubject,
    link,
  } = options;
  assertNonEmptyString('email.from', from);
  const recipients = Array.isArray(to) ? to : [to];
  if (recipients.length === 0 || recipients.some((r) => typeof r !== 'string' || r.length === 0)) {
    throw new InvalidOptionError(
      'email.to',
      'must be an address or a non-empty list of addresses.',
    );
  }
  assertNonEmptyString('email.name', name);
  assertPositiveMs('email.timeoutMs', timeoutMs);
  if (typeof subject !== 'function') {
    throw new InvalidOptionError('email.subject', 'must be a function (event) => string.');
  }
  if (link !== undefined && typeof link !== 'function') {
    throw new InvalidOptionError('email.link', 'must be a function (alert) => string | undefined.');
  }
  let transporter: Transporter;
  if (typeof transport === 'object' && transport !== null && 'sendMail' in transport) {
    transporter = transport as Transporter;
  } else if (
    typeof transport === 'string' ||
    (typeof transport === 'object' && transport !== null)
  ) {
    const bounds = {
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    };
    try {
      transporter = nodemailer.createTransport({
        ...bounds,
        ...(typeof transport === 'string' ? { url: transport } : transport),
      });
    } catch (cause) {
      throw new InvalidOptionError(
        'email.transport',
        'nodemailer refused it; pass { host, port } or an smtp:// URL.',
        { cause },
      );
    }
  } else {
    throw new InvalidOptionError(
      'email.transport',
      'must be SMTP options ({ host, port, secure, auth }), an smtp:// or smtps:// URL, or a nodemailer transporter.',
    );
  }
  return {
    name,
    async notify(event, { signal }) {
      signal.throwIfAborted();
      try {
        await transporter.sendMail({
          from,
          to: recipients,
          subject: subject(event).replace(/[\r\n]+/g, ' '),
          text: alertText(event, link),
          headers: {
            'X-Fleetcron-Alert': event.alert.id,
            'X-Fleetcron-Event': `alert.${event.action}`,
          },
        });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw failure(name, error);
      }
    },
  };
}
