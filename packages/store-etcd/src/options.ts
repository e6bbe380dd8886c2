import { type Clock, realClock } from '@fleetcron/core';
import {
  assertNonEmptyString,
  assertPositiveInteger,
  assertPositiveMs,
  DEFAULT_MAX_ERROR_LENGTH,
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
   * Clock of `lastSeenAt`, `pausedAt` and `requestedAt` (etcd reports no server time). Instance
   * liveness is NOT judged by it: registry keys expire with etcd leases. Default: real clock.
   */
  clock?: Clock;
}

/** {@link EtcdStoreOptions} with defaults applied. */
export interface ResolvedStoreOptions {
  prefix: string;
  maxHistory: number;
  maxErrorLength: number;
  requestTimeoutMs: number;
  clock: Clock;
}

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
  return {
    prefix,
    maxHistory,
    maxErrorLength,
    requestTimeoutMs,
    clock: options.clock ?? realClock,
  };
}
