import {
  assertNonEmptyString,
  assertNonNegativeMs,
  assertPositiveMs,
  type Clock,
  DEFAULT_EARLY_TOLERANCE_MS,
  DEFAULT_WINDOW_MS,
  InvalidOptionError,
  realClock,
} from '@fleetcron/core';

/** Options of {@link EtcdLock}. */
export interface EtcdLockOptions {
  /** Prefix of every key the adapter writes. Default `fleetcron/`. */
  prefix?: string;
  /** Claim window in ms: fires older than `now - windowMs` are stale. Default 5 minutes. */
  windowMs?: number;
  /**
   * The clock that judges staleness (etcd cannot read a clock inside a transaction). Lease
   * expiry is judged by the etcd server's own TTLs, never by this clock. Default: real clock.
   */
  clock?: Clock;
  /**
   * A claim for a fire more than this far ahead of `clock` is refused `early`, in ms. Default
   * 250. Judged by the adapter's clock: etcd reports no server time (README, "The fleet's clock").
   */
  earlyToleranceMs?: number;
  /** Deadline of every etcd request, in ms; past it the call throws `BackendUnavailableError`. Default 5000. */
  requestTimeoutMs?: number;
  /**
   * How much the clocks of the fleet may disagree, in ms. Claim records are kept until
   * `fireAt + windowMs + skewToleranceMs` by the claimer's clock, so an instance whose clock is up
   * to this much behind still finds the record. Default: `windowMs`.
   */
  skewToleranceMs?: number;
  /**
   * Spare etcd leases kept granted and alive per lease length, so that a claim takes one
   * transaction. `0` grants a lease per claim (two round trips, exact TTL). Default 2.
   */
  spareLeases?: number;
}

/** {@link EtcdLockOptions} with defaults applied and validated. */
export interface ResolvedOptions {
  prefix: string;
  windowMs: number;
  earlyToleranceMs: number;
  clock: Clock;
  requestTimeoutMs: number;
  skewToleranceMs: number;
  spareLeases: number;
}

/** Applies defaults and throws {@link InvalidOptionError} naming the first bad option. */
export function resolveOptions(options: EtcdLockOptions): ResolvedOptions {
  const prefix = options.prefix ?? 'fleetcron/';
  assertNonEmptyString('prefix', prefix);
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  assertPositiveMs('windowMs', windowMs);
  const requestTimeoutMs = options.requestTimeoutMs ?? 5_000;
  assertPositiveMs('requestTimeoutMs', requestTimeoutMs);
  const skewToleranceMs = options.skewToleranceMs ?? windowMs;
  assertNonNegativeMs('skewToleranceMs', skewToleranceMs);
  const spareLeases = options.spareLeases ?? 2;
  if (!Number.isInteger(spareLeases) || spareLeases < 0) {
    throw new InvalidOptionError(
      'spareLeases',
      `must be an integer >= 0, got ${String(spareLeases)}.`,
    );
  }
  const earlyToleranceMs = options.earlyToleranceMs ?? DEFAULT_EARLY_TOLERANCE_MS;
  assertNonNegativeMs('earlyToleranceMs', earlyToleranceMs);
  const clock = options.clock ?? realClock;
  return {
    ...{ prefix, windowMs, earlyToleranceMs, clock },
    ...{ requestTimeoutMs, skewToleranceMs, spareLeases },
  };
}
