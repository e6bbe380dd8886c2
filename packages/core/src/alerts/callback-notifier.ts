import { InvalidOptionError } from '../errors.js';
import { assertNonEmptyString } from '../validate.js';
import type { AlertEvent, Notifier, NotifyOptions } from './notifier.js';

/**
 * A {@link Notifier} that calls `callback` (synchronous or async): a thrown error or a rejected
 * promise is a failed delivery, retried by the delivery like any other.
 *
 * @param callback receives the event and the attempt's `signal`.
 * @param options.name the notifier's name in events and logs. Default `callback`.
 * @throws InvalidOptionError (fields `callback`, `name`) for a bad argument.
 */
export function callbackNotifier(
  callback: (event: AlertEvent, options: NotifyOptions) => void | Promise<void>,
  options: { name?: string } = {},
): Notifier {
  if (typeof callback !== 'function') {
    throw new InvalidOptionError(
      'callback',
      'must be a function (event, { signal }) => void | Promise<void>.',
    );
  }
  const name = options?.name ?? 'callback';
  assertNonEmptyString('name', name);
  return {
    name,
    async notify(event, notifyOptions) {
      await callback(event, notifyOptions);
    },
  };
}
