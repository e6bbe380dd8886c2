import type { AlertDeliveryOptions } from '../alerts/alert-delivery.js';
import type { AlertEvent, Notifier } from '../alerts/notifier.js';
import { InvalidOptionError } from '../errors.js';
import { type FleetStore, hasFleetControl } from '../registry.js';
import type { Store } from '../store.js';
import { assertNonEmptyString, assertPositiveMs } from '../validate.js';

/** Default {@link FleetWatchdogOptions.every}: the watchdog looks every 30 s. */
export const DEFAULT_WATCHDOG_EVERY_MS = 30_000;
/** Default {@link FleetWatchdogOptions.settleMs}: facts are judged once 10 s old. */
export const DEFAULT_WATCHDOG_SETTLE_MS = 10_000;
/** Default {@link FleetWatchdogOptions.name}. */
export const DEFAULT_WATCHDOG_JOB_NAME = 'fleetcron.watchdog';
/**
 * Longest span one watchdog run looks back over, ms (one day): after a longer outage of the
 * whole fleet, what happened before that is not alerted.
 */
export const WATCHDOG_MAX_LOOKBACK_MS = 24 * 60 * 60 * 1000;
/** Executions read per job and kind per run (one `history()` page): at most this many alerts each. */
export const WATCHDOG_PAGE = 100;

/** Options of {@link fleetWatchdog}. */
export interface FleetWatchdogOptions {
  /** The fleet's store: its history and registry are what the watchdog reads. */
  store: Store;
  /**
   * Where alerts go (webhook, Slack, e-mail, callback), each wrapped in retries and bounds
   * (`createAlertDelivery` with `delivery`). At least one.
   */
  notifiers: readonly Notifier[];
  /** Retries and bounds of each delivery (see `createAlertDelivery`). */
  delivery?: AlertDeliveryOptions;
  /** How often the watchdog looks, ms (an `every()` trigger). Default 30 s. */
  every?: number;
  /**
   * How old a fact must be before a run judges it, ms: each run judges what ended up to
   * `settleMs` before its fire, so history rows written a little after their run ended (batched
   * writes, a slow store) are in the store when read. A row written later than this after its
   * run ended is not reported. Default 10 s.
   */
  settleMs?: number;
  /** The watchdog job's name. Default `fleetcron.watchdog`. */
  name?: string;
  /** Alert on runs that failed after their retries (`failed`, `timed_out`). Default `true`. */
  failed?: boolean;
  /**
   * Alert on fires recorded as not run because nobody could claim them (`skipped` with reason
   * `missed`: the fleet was down at the fire; `backend_unavailable`: every claim failed).
   * Default `true`.
   */
  missed?: boolean;
  /**
   * Alert on runs that started more than this many ms after their fire time (`run_late`): a
   * fleet too loaded or too slow to claim on time. `null` (default): off.
   */
  lateAfterMs?: number | null;
  /**
   * The dead-man's switch, per job: `{ export: 3_600_000 }` raises `job_overdue` for `export`
   * when its next fire after its last success (its definition's first fire when it never
   * succeeded) is more than an hour past with no success since, and resolves it at the next
   * success. The fires come from the job's trigger as the fleet's registry holds it (excluded
   * fires and its start/end respected), so a job with a custom trigger cannot be watched.
   * Stored schedules carry their own (`options.overdueAfterMs`, read on every run); an entry
   * here for the same job (`schedule:<id>`) wins.
   */
  overdue?: Readonly<Record<string, number>>;
  /** Told about every alert event this instance raised or resolved (after delivery was tried). */
  onAlert?: (event: AlertEvent) => void;
}

/** The options with defaults applied and checked. */
export interface ResolvedWatchdog {
  readonly store: Store & FleetStore;
  readonly notifiers: readonly Notifier[];
  readonly delivery: AlertDeliveryOptions;
  readonly everyMs: number;
  readonly settleMs: number;
  readonly name: string;
  readonly failed: boolean;
  readonly missed: boolean;
  readonly lateAfterMs: number | null;
  readonly overdue: ReadonlyMap<string, number>;
  readonly onAlert: ((event: AlertEvent) => void) | null;
}

/**
 * Checks the options of {@link fleetWatchdog} and applies the defaults.
 * @throws InvalidOptionError naming the field.
 */
export function resolveWatchdog(options: FleetWatchdogOptions): ResolvedWatchdog {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('options', 'pass { store, notifiers, ... }.');
  }
  const { store, notifiers } = options;
  if (typeof store !== 'object' || store === null || typeof store.history !== 'function') {
    throw new InvalidOptionError('store', 'must be the fleet Store (one with history()).');
  }
  if (!hasFleetControl(store)) {
    throw new InvalidOptionError(
      'store',
      'must keep the fleet registry (instances(), listJobs()): every built-in store does.',
    );
  }
  if (!Array.isArray(notifiers) || notifiers.length === 0) {
    throw new InvalidOptionError(
      'notifiers',
      'must list at least one notifier, e.g. [webhookNotifier({ url, secret })].',
    );
  }
  notifiers.forEach((n: Notifier, i) => {
    if (typeof n !== 'object' || n === null || typeof n.notify !== 'function') {
      throw new InvalidOptionError(`notifiers[${i}]`, 'must be a Notifier ({ name, notify }).');
    }
  });
  const everyMs = options.every ?? DEFAULT_WATCHDOG_EVERY_MS;
  assertPositiveMs('every', everyMs);
  const settleMs = options.settleMs ?? DEFAULT_WATCHDOG_SETTLE_MS;
  if (typeof settleMs !== 'number' || !Number.isFinite(settleMs) || settleMs < 0) {
    throw new InvalidOptionError('settleMs', `must be 0 or more ms, got ${String(settleMs)}.`);
  }
  const name = options.name ?? DEFAULT_WATCHDOG_JOB_NAME;
  assertNonEmptyString('name', name);
  for (const key of ['failed', 'missed'] as const) {
    const value = options[key];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new InvalidOptionError(key, `must be true or false, got ${JSON.stringify(value)}.`);
    }
  }
  const lateAfterMs = options.lateAfterMs ?? null;
  if (lateAfterMs !== null) assertPositiveMs('lateAfterMs', lateAfterMs);
  const overdue = new Map<string, number>();
  for (const [job, graceMs] of Object.entries(options.overdue ?? {})) {
    assertPositiveMs(`overdue.${job}`, graceMs);
    overdue.set(job, graceMs);
  }
  if (options.onAlert !== undefined && typeof options.onAlert !== 'function') {
    throw new InvalidOptionError('onAlert', 'must be a function (event) => void.');
  }
  return {
    store,
    notifiers: [...notifiers],
    delivery: options.delivery ?? {},
    everyMs,
    settleMs,
    name,
    failed: options.failed ?? true,
    missed: options.missed ?? true,
    lateAfterMs,
    overdue,
    onAlert: options.onAlert ?? null,
  };
}
