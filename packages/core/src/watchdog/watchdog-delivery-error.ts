import { FleetcronError } from '../errors.js';

/**
 * A fleet watchdog run could not deliver every alert event it raised (code
 * `WATCHDOG_UNDELIVERED`): some delivery gave up after its attempts (`createAlertDelivery`).
 * The run ends `failed` with it, so the next run starts its span at the last _successful_ run,
 * judges the same facts again and sends them again with the same alert ids (at least once).
 * `cause` is the delivery's last failure (a `NotifyFailedError`, `NotifyTimeoutError`, …), an
 * `AggregateError` of them when several deliveries failed. The per-attempt failures were
 * published as `alert.delivery_failed` events.
 */
export class WatchdogDeliveryError extends FleetcronError {
  /** How many deliveries (event × notifier) gave up in the run. */
  readonly undelivered: number;
  /** @param failures the last failure of each delivery that gave up, at least one. */
  constructor(failures: readonly Error[]) {
    const [first] = failures;
    const cause = failures.length === 1 ? first : new AggregateError(failures);
    super(
      'WATCHDOG_UNDELIVERED',
      `fleet watchdog: ${failures.length} alert deliver${failures.length === 1 ? 'y' : 'ies'} failed (${first?.message ?? 'no error given'}); the next run judges the span again and sends them again`,
      { cause },
    );
    this.undelivered = failures.length;
  }
}
