import { type AuditRetention, type Clock, InvalidOptionError, realClock } from '@fleetcron/core';
import {
  assertNonEmptyString,
  assertPositiveInteger,
  assertPositiveMs,
  DEFAULT_MAX_ERROR_LENGTH,
  resolveAuditRetention,
} from '@fleetcron/core/backend';

/** Options of {@link EtcdStore}. */
export interface EtcdStoreOptions {
  /** Prefix of every key the store writes. Default `fleetcron/store/`. */
  prefix?: string;
  /** Executions kept per job; recording more drops the oldest. Default 1000. */
  maxHistory?: number;
  /** Longest stored error text, in characters (see `boundErrorText`). Default 8192. */
  maxErrorLength?: number;
  /** Deadline of every etcd request, in ms; past it the call throws `BackendUnavailableError`. Default 5000. */
  requestTimeoutMs?: number;
  /**
   * Most compares, and most operations, in one transaction of `recordMany` or of a run-request
   * take: the server's `--max-txn-ops` (etcd's default 128). At least 4. Default 128.
   */
  maxTxnOps?: number;
  /**
   * Clock of `lastSeenAt`, `pausedAt`, a run request's `requestedAt`, `takenUntil` and
   * `decidedAt`, and of whether a take's lease has ended (etcd reports no server time). Instance
   * liveness is NOT judged by it: registry keys expire with etcd leases. Default: real clock.
   */
  clock?: Clock;
  /**
   * How much audit log to keep (`listAudit`): at most `maxEntries` newest entries (default
   * {@link DEFAULT_ETCD_AUDIT_MAX_ENTRIES}, 10,000: fewer than core's 100,000, because every etcd
   * range counts all the keys it spans) of at most `maxAgeMs` (default 90 days, by `clock`). After
   * each mutation a bounded batch of older entries is deleted.
   */
  audit?: AuditRetention;
}

/** {@link EtcdStoreOptions} with defaults applied. */
export interface ResolvedStoreOptions {
  prefix: string;
  maxHistory: number;
  maxErrorLength: number;
  requestTimeoutMs: number;
  maxTxnOps: number;
  clock: Clock;
  audit: Required<AuditRetention>;
}

/** Default of {@link EtcdStoreOptions.maxTxnOps}: etcd's default `--max-txn-ops`. */
export const DEFAULT_MAX_TXN_OPS = 128;

/**
 * Default `audit.maxEntries` of the etcd store: 10,000. etcd answers every range with the number
 * of keys it spans, counted key by key, so the prune after each mutation and each page of
 * `listAudit` cost time in proportion to the log (measured on 2 loaded cores: a pause 7 ms p50
 * and a page 5 ms at 10,000 entries; 49 ms and 128 ms at 100,000).
 */
export const DEFAULT_ETCD_AUDIT_MAX_ENTRIES = 10_000;

/** Default of {@link EtcdStoreOptions.maxHistory}. */
export const DEFAULT_MAX_HISTORY = 1000;

/** Applies defaults; throws `InvalidOptionError` naming the first bad option. */
export function resolveStoreOptions(options: EtcdStoreOptions = {}): ResolvedStoreOptions {
  const prefix = options.prefix ?? 'fleetcron/store/';
  assertNonEmptyString('prefix', prefix);
  const maxHistory = options.maxHistory ?? DEFAULT_MAX_HISTORY;
  assertPositiveInteger('maxHistory', maxHistory);
  const maxErrorLength = options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH;
  assertPositiveInteger('maxErrorLength', maxErrorLength);
  const requestTimeoutMs = options.requestTimeoutMs ?? 5_000;
  assertPositiveMs('requestTimeoutMs', requestTimeoutMs);
  const maxTxnOps = options.maxTxnOps ?? DEFAULT_MAX_TXN_OPS;
  assertPositiveInteger('maxTxnOps', maxTxnOps);
  if (maxTxnOps < 4) {
    throw new InvalidOptionError(
      'maxTxnOps',
      `must be at least 4 (one execution writes up to 4 keys), got ${maxTxnOps}.`,
    );
  }
  return {
    prefix,
    maxTxnOps,
    maxHistory,
    maxErrorLength,
    requestTimeoutMs,
    clock: options.clock ?? realClock,
    audit: resolveAuditRetention({
      ...options.audit,
      maxEntries: options.audit?.maxEntries ?? DEFAULT_ETCD_AUDIT_MAX_ENTRIES,
    }),
  };
}
