import { FleetcronError } from '../errors.js';

/**
 * A notifier's receiver refused or failed an event (code `NOTIFY_FAILED`): an HTTP status other
 * than 2xx, an SMTP rejection. `retryable` is `false` when sending the same event again cannot
 * help (HTTP 4xx other than 408 and 429, a permanent SMTP 5xx); the delivery then gives up at
 * once instead of using its attempts.
 */
export class NotifyFailedError extends FleetcronError {
  /** The notifier's name, e.g. `webhook`. */
  readonly notifier: string;
  /** Whether another attempt may succeed. */
  readonly retryable: boolean;
  /** The receiver's status (HTTP status, SMTP reply code), when there was one. */
  readonly status: number | undefined;
  constructor(
    notifier: string,
    message: string,
    options: { retryable: boolean; status?: number; cause?: unknown },
  ) {
    super('NOTIFY_FAILED', `${notifier} notifier: ${message}`, { cause: options.cause });
    this.notifier = notifier;
    this.retryable = options.retryable;
    this.status = options.status;
  }
}

/**
 * One delivery attempt ran past its `timeoutMs` (code `NOTIFY_TIMEOUT`); the attempt's signal was
 * aborted with this reason. Retried like any failure while attempts and time remain.
 */
export class NotifyTimeoutError extends FleetcronError {
  /** The notifier's name. */
  readonly notifier: string;
  constructor(notifier: string, timeoutMs: number) {
    super(
      'NOTIFY_TIMEOUT',
      `${notifier} notifier: no answer within ${timeoutMs} ms; raise timeoutMs if the receiver is slow`,
    );
    this.notifier = notifier;
  }
}
