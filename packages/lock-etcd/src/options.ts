import { type Clock, InvalidOptionError, realClock } from '@fleetcron/core';
import {
  assertNonEmptyString,
  assertNonNegativeMs,
  assertPositiveMs,
  DEFAULT_EARLY_TOLERANCE_MS,
  DEFAULT_WINDOW_MS,
} from '@fleetcron/core/backend';

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
  /**
   * How the lock learns the etcd host's clock (README, "The fleet's clock"): from the `Date`
   * header of etcd's HTTP endpoint, measured from construction and every `remeasureMs`. `false`
   * turns it off: `early` is then judged by `clock` and answers carry no `backendTime`.
   * Default: on, with the defaults of {@link EtcdClockOptions}.
   */
  etcdClock?: false | EtcdClockOptions;
  /**
   * The `--max-txn-ops` of your etcd cluster (etcd's default: 128): a batched claim
   * (`claimMany`) puts at most this many operations on each level of one transaction, and splits
   * larger batches into several transactions. Lower it only if your cluster runs with a lower
   * limit. Integer >= 16. Default 128.
   */
  maxTxnOps?: number;
}

/** Options of the etcd host clock measurement ({@link EtcdLockOptions.etcdClock}). */
export interface EtcdClockOptions {
  /** Base URL of the etcd HTTP endpoint to read. Default: the client's first host. */
  url?: string;
  /** A new measurement this often, in ms. Default 60,000. */
  remeasureMs?: number;
  /** Measurements with a larger error bound are dropped, in ms. Default 100. */
  maxErrorMs?: number;
}

/** {@link EtcdClockOptions} with defaults applied. */
export interface ResolvedEtcdClock {
  url: string | undefined;
  remeasureMs: number;
  maxErrorMs: number;
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
  etcdClock: false | ResolvedEtcdClock;
  maxTxnOps: number;
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
  const maxTxnOps = options.maxTxnOps ?? 128;
  if (!Number.isInteger(maxTxnOps) || maxTxnOps < 16) {
    throw new InvalidOptionError(
      'maxTxnOps',
      `must be an integer >= 16 (your etcd's --max-txn-ops, default 128), got ${String(maxTxnOps)}.`,
    );
  }
  const clock = options.clock ?? realClock;
  const etcdClock = resolveEtcdClock(options.etcdClock);
  return {
    ...{ prefix, windowMs, earlyToleranceMs, clock },
    ...{ requestTimeoutMs, skewToleranceMs, spareLeases, etcdClock, maxTxnOps },
  };
}

function resolveEtcdClock(option: EtcdLockOptions['etcdClock']): false | ResolvedEtcdClock {
  if (option === false) return false;
  if (option !== undefined && (option === null || typeof option !== 'object')) {
    throw new InvalidOptionError(
      'etcdClock',
      `must be false (off) or an object { url?, remeasureMs?, maxErrorMs? }, got ${String(option)}.`,
    );
  }
  const url = option?.url;
  if (url !== undefined && !/^https?:\/\/[^/]/.test(String(url))) {
    throw new InvalidOptionError(
      'etcdClock.url',
      `must be an http:// or https:// URL of an etcd client endpoint, got ${JSON.stringify(url)}.`,
    );
  }
  const remeasureMs = option?.remeasureMs ?? 60_000;
  assertPositiveMs('etcdClock.remeasureMs', remeasureMs);
  const maxErrorMs = option?.maxErrorMs ?? 100;
  assertPositiveMs('etcdClock.maxErrorMs', maxErrorMs);
  return { url, remeasureMs, maxErrorMs };
}
