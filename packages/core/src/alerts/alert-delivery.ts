import { type BackoffOptions, backoffPlan, type Jitter } from '../backoff.js';
import { type Clock, realClock } from '../clock.js';
import { InvalidOptionError, toError } from '../errors.js';
import { publish } from '../events.js';
import { defaultInstanceId } from '../scheduler/instance-id.js';
import { assertNonEmptyString, assertPositiveInteger, assertPositiveMs } from '../validate.js';
import type { AlertEvent, Notifier } from './notifier.js';
import { NotifyTimeoutError } from './notify-errors.js';

/** Default most attempts of one delivery, the first included. */
export const DEFAULT_DELIVERY_ATTEMPTS = 5;
/** Default bound of one attempt, ms. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;
/** Default bound of one whole delivery (every attempt and wait), ms. */
export const DEFAULT_DELIVERY_MAX_ELAPSED_MS = 120_000;

/** What the delivery reports when it gives up (to `onError`). */
export interface DeliveryFailure {
  /** The notifier's name. */
  notifier: string;
  /** The event that was not delivered. */
  event: AlertEvent;
  /** Attempts made. */
  attempts: number;
}

/** Options of {@link createAlertDelivery}. */
export interface AlertDeliveryOptions {
  /** Most attempts, the first included. A positive integer. Default 5. */
  attempts?: number;
  /** Backoff between attempts. Default `initialMs` 1000, `maxMs` 30000, `factor` 2. */
  backoff?: BackoffOptions;
  /** `'full'` (default): wait a random time under the backoff's cap; `'none'`: the cap. */
  jitter?: Jitter;
  /** Random source in [0, 1) for jitter. Default `Math.random`. */
  random?: () => number;
  /** Bound of one attempt, ms: its signal is aborted and the attempt counts as failed. Default 10000. */
  timeoutMs?: number;
  /** Bound of the whole delivery, ms: no attempt starts or runs past it. Default 120000. */
  maxElapsedMs?: number;
  /** Whether a failure is worth another attempt. Default: unless the error says `retryable: false`. */
  retryIf?: (error: Error) => boolean;
  /** Time and timers (tests pass a `FakeClock`). Default `realClock`. */
  clock?: Clock;
  /** Instance named in `alert.delivery_failed` events. Default `${hostname}-${pid}-${random}`. */
  instanceId?: string;
  /** Called once when a delivery gives up. A throwing `onError` is contained. */
  onError?: (error: Error, failure: DeliveryFailure) => void;
}

/** What {@link AlertDelivery.deliver} resolves to; it never rejects. */
export interface DeliveryResult {
  /** The receiver accepted the event. */
  delivered: boolean;
  /** Attempts made. */
  attempts: number;
  /** The last failure, `null` when delivered. */
  error: Error | null;
}

/** A notifier wrapped in retries, timeouts and failure reporting. */
export interface AlertDelivery {
  /** The wrapped notifier. */
  readonly notifier: Notifier;
  /**
   * Delivers `event`, retrying with backoff within the attempts and time allowed. Never
   * rejects: a delivery that fails for good resolves `{ delivered: false }`, published an
   * `alert.delivery_failed` event per failed attempt and called `onError` once. `signal` stops
   * it (the current attempt is aborted, no further attempt starts).
   */
  deliver(event: AlertEvent, options?: { signal?: AbortSignal }): Promise<DeliveryResult>;
}

/** Rejects with the signal's reason once it aborts. */
function whenAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Wraps `notifier` so each event is delivered with retries and exponential backoff, each attempt
 * bounded by `timeoutMs` and the whole delivery by `attempts` and `maxElapsedMs`. An attempt that
 * ignores its signal is abandoned at its timeout (its late outcome is ignored, never an
 * unhandled rejection). Every failed attempt publishes `alert.delivery_failed` on the fleetcron
 * events channel; a delivery that gives up also calls `onError`.
 *
 * @throws InvalidOptionError (fields `notifier`, `delivery.*`) for bad options, at creation.
 */
export function createAlertDelivery(
  notifier: Notifier,
  options: AlertDeliveryOptions = {},
): AlertDelivery {
  if (typeof notifier !== 'object' || notifier === null || typeof notifier.notify !== 'function') {
    throw new InvalidOptionError(
      'notifier',
      'must be a Notifier ({ name, notify(event, { signal }) }), e.g. callbackNotifier(fn) or webhookNotifier(options) from @fleetcron/notify.',
    );
  }
  assertNonEmptyString('notifier.name', notifier.name);
  const {
    attempts = DEFAULT_DELIVERY_ATTEMPTS,
    backoff = {},
    jitter = 'full',
    random = Math.random,
    timeoutMs = DEFAULT_DELIVERY_TIMEOUT_MS,
    maxElapsedMs = DEFAULT_DELIVERY_MAX_ELAPSED_MS,
    retryIf = (error: Error) => (error as { retryable?: unknown }).retryable !== false,
    clock = realClock,
    instanceId = defaultInstanceId(),
    onError,
  } = options ?? {};
  assertPositiveInteger('delivery.attempts', attempts);
  const plan = backoffPlan('delivery', backoff, { initialMs: 1000, maxMs: 30_000 }, jitter, random);
  assertPositiveMs('delivery.timeoutMs', timeoutMs);
  assertPositiveMs('delivery.maxElapsedMs', maxElapsedMs);
  if (typeof retryIf !== 'function') {
    throw new InvalidOptionError('delivery.retryIf', 'must be a function (error) => boolean.');
  }
  if (typeof clock?.setTimer !== 'function' || typeof clock.monotonic !== 'function') {
    throw new InvalidOptionError('delivery.clock', 'must be a Clock (realClock or a FakeClock).');
  }
  assertNonEmptyString('delivery.instanceId', instanceId);
  if (onError !== undefined && typeof onError !== 'function') {
    throw new InvalidOptionError(
      'delivery.onError',
      'must be a function (error, failure) => void.',
    );
  }

  async function attempt(event: AlertEvent, ms: number, outer?: AbortSignal): Promise<void> {
    const controller = new AbortController();
    const timer = clock.setTimer(
      () => controller.abort(new NotifyTimeoutError(notifier.name, ms)),
      ms,
    );
    const onOuter = () => controller.abort(outer?.reason);
    if (outer?.aborted) onOuter();
    else outer?.addEventListener('abort', onOuter, { once: true });
    try {
      const work = Promise.resolve().then(() =>
        notifier.notify(event, { signal: controller.signal }),
      );
      work.catch(() => {}); // an attempt abandoned at its timeout settles unobserved
      await Promise.race([work, whenAborted(controller.signal)]);
    } finally {
      clock.clearTimer(timer);
      outer?.removeEventListener('abort', onOuter);
    }
  }

  function published(event: AlertEvent, n: number, error: Error, retryInMs: number | null): void {
    publish({
      type: 'alert.delivery_failed',
      instanceId,
      at: clock.now(),
      ...(event.alert.job === null ? {} : { job: event.alert.job }),
      notifier: notifier.name,
      alertId: event.alert.id,
      alertKey: event.alert.key,
      action: event.action,
      attempt: n,
      retryInMs,
      error,
    });
  }

  function gaveUp(event: AlertEvent, n: number, error: Error): DeliveryResult {
    try {
      onError?.(error, { notifier: notifier.name, event, attempts: n });
    } catch {
      // a faulty onError must never break the caller
    }
    return { delivered: false, attempts: n, error };
  }

  return {
    notifier,
    async deliver(event, deliverOptions = {}) {
      if (
        typeof event?.alert?.key !== 'string' ||
        (event.action !== 'opened' && event.action !== 'resolved')
      ) {
        const error = new InvalidOptionError(
          'event',
          "must be { action: 'opened' | 'resolved', alert } with an alert from openAlert().",
        );
        return gaveUp(event, 0, error);
      }
      const signal = deliverOptions?.signal;
      const deadline = clock.monotonic() + maxElapsedMs;
      for (let n = 1; ; n++) {
        const remaining = deadline - clock.monotonic();
        let error: Error;
        try {
          if (signal?.aborted) throw signal.reason;
          await attempt(event, Math.min(timeoutMs, Math.max(1, remaining)), signal);
          return { delivered: true, attempts: n, error: null };
        } catch (thrown) {
          error = toError(thrown);
        }
        const delay = plan.delayMs(n);
        let worthRetrying = false;
        try {
          worthRetrying = !signal?.aborted && retryIf(error);
        } catch {
          // a throwing retryIf means: do not retry
        }
        const retry =
          worthRetrying && n < attempts && clock.monotonic() + delay < deadline ? delay : null;
        published(event, n, error, retry);
        if (retry === null) return gaveUp(event, n, error);
        try {
          await clock.sleep(retry, signal);
        } catch {
          return gaveUp(event, n, error); // stopped while waiting: the last failure stands
        }
      }
    },
  };
}
