import { InvalidOptionError, type LockCapabilities } from '@fleetcron/core';
import {
  assertPositiveMs,
  DEFAULT_EARLY_TOLERANCE_MS,
  DEFAULT_WINDOW_MS,
} from '@fleetcron/core/backend';
import { resolveCommandTimeoutMs, resolvePrefix } from '@fleetcron/redis-shared';
import type { RedisLock } from './redis-lock.js';
import { type ReplicaAckOptions, resolveReplicaAck } from './replica-ack.js';

/**
 * Most requests {@link RedisLock.claimMany} (and `extendMany`, `releaseMany`) take in one call:
 * `capabilities.maxBatch`. See the README, "Batched claims", for how it was measured.
 */
export const REDIS_MAX_BATCH = 2_000;

/** Options of {@link RedisLock}. */
export interface RedisLockOptions {
  /** First part of every key's hash tag; must not contain `{` or `}`. Default `fleetcron`. */
  prefix?: string;
  /** Claim window in ms: fires older than this (by the Redis clock) are stale. Default 5 minutes. */
  windowMs?: number;
  /**
   * A claim for a fire more than this far ahead of the Redis clock (`TIME`) is refused `early`
   * (the scheduler claims it again when the fleet's clock reaches it), in whole ms. Default 250.
   */
  earlyToleranceMs?: number;
  /**
   * Longest wait for one Redis call before it fails with `BackendUnavailableError`, in ms.
   * Applied by racing the call against a timer, whatever the client's own settings. Default 5000.
   */
  commandTimeoutMs?: number;
  /**
   * Declare that the server keeps every write across a restart (`appendonly yes` with
   * `appendfsync always`). Sets `capabilities.durable`; check it with
   * {@link RedisLock.verifyDurability}. Default `false`.
   */
  durable?: boolean;
  /**
   * Opt-in acknowledgement by replicas: after a claim that won (`claim`, `claimMany`) and after a
   * renewal (`extend`, `extendMany`) the lock sends `WAIT replicas timeoutMs` on the same
   * connection; when fewer replicas acknowledged in time the call fails closed with
   * `ReplicaAckError` (a `BackendUnavailableError`), a claim's wins handed back first. Narrows the
   * failover gap of asynchronous replication (README, "Acknowledgement by replicas"). Default: off.
   */
  replicaAck?: ReplicaAckOptions;
}

/** {@link RedisLockOptions}, checked, with defaults applied, and the capabilities they give. */
export interface ResolvedLockOptions {
  prefix: string;
  windowMs: number;
  commandTimeoutMs: number;
  replicaAck: ReplicaAckOptions | undefined;
  capabilities: LockCapabilities;
}

/** Checks `options` (`InvalidOptionError` naming the field and the fix) and applies defaults. */
export function resolveLockOptions(options: RedisLockOptions): ResolvedLockOptions {
  const prefix = resolvePrefix(options.prefix);
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  assertPositiveMs('windowMs', windowMs);
  if (!Number.isInteger(windowMs)) {
    throw new InvalidOptionError('windowMs', `must be a whole number of ms, got ${windowMs}.`);
  }
  const commandTimeoutMs = resolveCommandTimeoutMs(options.commandTimeoutMs);
  if (options.durable !== undefined && typeof options.durable !== 'boolean') {
    throw new InvalidOptionError('durable', `must be a boolean, got ${String(options.durable)}.`);
  }
  const capabilities: LockCapabilities = {
    minLeaseMs: 1,
    leaseGranularityMs: 1,
    durable: options.durable ?? false,
    clock: 'backend',
    earlyToleranceMs: resolveEarlyTolerance(options.earlyToleranceMs),
    // The mark is a key without TTL: it survives a restart exactly when the server persists.
    durableMark: options.durable ?? false,
    maxBatch: REDIS_MAX_BATCH,
  };
  const replicaAck = resolveReplicaAck(options.replicaAck, commandTimeoutMs);
  return { prefix, windowMs, commandTimeoutMs, replicaAck, capabilities };
}

/** Validates the `earlyToleranceMs` option (a whole, non-negative number of ms). */
function resolveEarlyTolerance(value: number | undefined): number {
  const ms = value ?? DEFAULT_EARLY_TOLERANCE_MS;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0) {
    throw new InvalidOptionError(
      'earlyToleranceMs',
      `must be a whole number of ms >= 0, got ${String(value)}.`,
    );
  }
  return ms;
}
