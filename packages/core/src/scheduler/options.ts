import { type Clock, realClock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import type { Lock } from '../lock.js';
import { type Logger, silentLogger } from '../logger.js';
import type { Middleware } from '../middleware.js';
import { RUN_REQUEST_TAKE_MS } from '../registry.js';
import type { Store } from '../store.js';
import {
  assertNonEmptyString,
  assertNonNegativeMs,
  assertPositiveInteger,
  assertPositiveMs,
} from '../validate.js';
import { DEFAULT_HEARTBEAT_MS } from './fleet-control/index.js';
import { defaultInstanceId } from './instance-id.js';
import { normalizeLeaseMs, validateMiddleware } from './job/index.js';
import { assertKnownKeys } from './known-keys.js';
import {
  LEADER_OPTION_KEYS,
  type LeaderOptions,
  type ResolvedLeader,
  resolveLeaderOptions,
} from './leader/index.js';
import { DEFAULT_CLOCK_SKEW_WARN_MS } from './timing/index.js';

/** Default lease length: 30 s, renewed every 10 s. */
export const DEFAULT_LEASE_MS = 30_000;
/** Default time `stop()` waits for running jobs before aborting them. */
export const DEFAULT_DRAIN_MS = 10_000;
/** Default interval of fleet run-request polling, ms. */
export const DEFAULT_RUN_REQUEST_POLL_MS = 1_000;
/** Default bound on claims one scheduler has in flight at once. */
export const DEFAULT_MAX_CONCURRENT_CLAIMS = 16;
/** Default largest batch of claims (renewals, releases) sent in one `claimMany` call. */
export const DEFAULT_CLAIM_BATCH_SIZE = 256;

/** Options of the {@link Scheduler} constructor (leader mode and shards: {@link LeaderOptions}). */
export interface SchedulerOptions extends LeaderOptions {
  /** Where fires are claimed. Required. The scheduler never closes it: you own it. */
  lock: Lock;
  /** Where history and the paused flag live. Optional; without it nothing is recorded. Never closed by the scheduler. */
  store?: Store;
  /** Time source and timers. Default: the real clock. */
  clock?: Clock;
  /** This instance's id (the lock owner). Default `${hostname}-${pid}-${random}`. */
  instanceId?: string;
  /**
   * Default lease length of jobs, ms. Default 30,000 (raised to the backend's minimum when that is
   * larger). Rounded up to the backend's `leaseGranularityMs`.
   */
  leaseMs?: number;
  /** Middleware around every job (outside each job's own middleware). */
  middleware?: Middleware[];
  /** Logger for the scheduler and jobs (`ctx.log`). Default: silent. */
  logger?: Logger;
  /** Default time `stop()` waits for running jobs before aborting them, ms. Default 10,000. */
  drainMs?: number;
  /**
   * With a lock WITHOUT batched claims (no `claimMany`): most claims this scheduler sends at
   * once; further due fires wait their turn. Default 16. Keep it at or below the client's
   * connection pool size so a burst of due jobs queues here, where a claim's timeout has not
   * started yet, instead of inside the client. Not used for locks with `claimMany`.
   */
  maxConcurrentClaims?: number;
  /**
   * With a lock that has batched claims (`claimMany`, `capabilities.maxBatch`): most claims in
   * one `claimMany` call. Fires due on one timer wake are claimed together, in batches of
   * min(`maxBatch`, `claimBatchSize`) sent concurrently; each won job starts as its batch's
   * answer arrives. Also bounds batched renewals and releases (`extendMany`, `releaseMany`).
   * A positive integer; default 256.
   */
  claimBatchSize?: number;
  /**
   * A warning is logged when this instance's clock is further than this from the backend's
   * clock (the fleet's clock), ms. Fires follow the backend's clock either way. Default 1,000.
   */
  clockSkewWarnMs?: number;
  /**
   * With a store that has fleet control: how often this instance heartbeats into the fleet
   * registry (and checks drift, sweeps for fires whose holder died), ms. Default 10,000. The
   * instance counts as gone when unseen for 3 heartbeats.
   */
  heartbeatMs?: number;
  /**
   * With a store that has fleet control but no push (`watchRunRequests`): how often fleet run
   * requests are polled, ms. Default 1,000. With push, also the fallback poll interval.
   */
  runRequestPollMs?: number;
  /**
   * With a store that decides run requests (every built-in store): how long this instance holds
   * a fleet run request it took before another instance may take it, ms. A taker that dies, is
   * frozen or loses the take's reply delays the request by this much (plus the next poll). Keep
   * it well above a claim's round trip. Default `RUN_REQUEST_TAKE_MS` (30,000).
   */
  runRequestLeaseMs?: number;
}

/** Validated scheduler options (internal). */
export interface ResolvedOptions {
  lock: Lock;
  store: Store | null;
  clock: Clock;
  instanceId: string;
  leaseMs: number;
  middleware: Middleware[];
  logger: Logger;
  drainMs: number;
  maxConcurrentClaims: number;
  claimBatchSize: number;
  clockSkewWarnMs: number;
  heartbeatMs: number;
  runRequestPollMs: number;
  runRequestLeaseMs: number;
  /** Leader mode and sharded fires. */
  leader: ResolvedLeader;
}

const hasMethods = (value: unknown, names: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function');

/** Validates the constructor options; every problem is a typed error naming the field. */
export function resolveOptions(options: unknown): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('options', 'must be an object with at least { lock }.');
  }
  assertKnownKeys(options, OPTION_KEYS, 'new Scheduler()');
  const o = options as Partial<SchedulerOptions>;
  const lock = checkLock(o.lock);
  const instanceId = o.instanceId ?? defaultInstanceId();
  assertNonEmptyString('instanceId', instanceId);
  const drainMs = o.drainMs ?? DEFAULT_DRAIN_MS;
  assertNonNegativeMs('drainMs', drainMs);
  const maxConcurrentClaims = o.maxConcurrentClaims ?? DEFAULT_MAX_CONCURRENT_CLAIMS;
  assertPositiveInteger('maxConcurrentClaims', maxConcurrentClaims);
  const claimBatchSize = o.claimBatchSize ?? DEFAULT_CLAIM_BATCH_SIZE;
  assertPositiveInteger('claimBatchSize', claimBatchSize);
  const clockSkewWarnMs = o.clockSkewWarnMs ?? DEFAULT_CLOCK_SKEW_WARN_MS;
  assertNonNegativeMs('clockSkewWarnMs', clockSkewWarnMs);
  const heartbeatMs = o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  assertPositiveMs('heartbeatMs', heartbeatMs);
  const runRequestPollMs = o.runRequestPollMs ?? DEFAULT_RUN_REQUEST_POLL_MS;
  assertPositiveMs('runRequestPollMs', runRequestPollMs);
  const runRequestLeaseMs = o.runRequestLeaseMs ?? RUN_REQUEST_TAKE_MS;
  assertPositiveMs('runRequestLeaseMs', runRequestLeaseMs);
  return {
    lock,
    store: checkStore(o.store),
    clock: checkHas('clock', o.clock ?? realClock, CLOCK_METHODS, 'must be a Clock'),
    instanceId,
    leaseMs: defaultLease(lock, o.leaseMs),
    middleware: validateMiddleware('middleware', o.middleware),
    logger: checkHas('logger', o.logger ?? silentLogger, LOGGER_METHODS, 'must be a logger with'),
    drainMs,
    maxConcurrentClaims,
    claimBatchSize,
    clockSkewWarnMs,
    heartbeatMs,
    runRequestPollMs,
    runRequestLeaseMs,
    leader: resolveLeaderOptions(o),
  };
}

/** The keys of {@link SchedulerOptions} (the compiler keeps the list complete). */
const OPTION_KEYS = Object.keys({
  lock: true,
  store: true,
  clock: true,
  instanceId: true,
  leaseMs: true,
  middleware: true,
  logger: true,
  drainMs: true,
  maxConcurrentClaims: true,
  claimBatchSize: true,
  clockSkewWarnMs: true,
  heartbeatMs: true,
  runRequestPollMs: true,
  runRequestLeaseMs: true,
  ...Object.fromEntries(LEADER_OPTION_KEYS.map((key) => [key, true])),
} satisfies Record<Exclude<keyof SchedulerOptions, keyof LeaderOptions>, true>);

const CLOCK_METHODS = ['now', 'monotonic', 'setTimer', 'clearTimer', 'sleep'] as const;
const LOGGER_METHODS = ['debug', 'info', 'warn', 'error'] as const;

function checkHas<T>(field: string, value: T, methods: readonly string[], what: string): T {
  if (!hasMethods(value, methods)) {
    throw new InvalidOptionError(field, `${what} (${methods.join(', ')}).`);
  }
  return value;
}

function checkLock(lock: unknown): Lock {
  if (!hasMethods(lock, ['claim', 'extend', 'release'])) {
    throw new InvalidOptionError(
      'lock',
      'must be a Lock (claim, extend, release), e.g. new MemoryLock() or a @fleetcron/lock-* adapter.',
    );
  }
  const capabilities = (lock as Lock).capabilities;
  if (
    typeof capabilities !== 'object' ||
    capabilities === null ||
    typeof capabilities.minLeaseMs !== 'number' ||
    typeof capabilities.leaseGranularityMs !== 'number'
  ) {
    throw new InvalidOptionError(
      'lock.capabilities',
      'must declare { minLeaseMs, leaseGranularityMs, durable, clock }.',
    );
  }
  assertPositiveMs('lock.windowMs', (lock as Lock).windowMs);
  return lock as Lock;
}

function checkStore(store: unknown): Store | null {
  if (store === undefined) return null;
  if (!hasMethods(store, ['record', 'history', 'getJobState', 'setPaused'])) {
    throw new InvalidOptionError(
      'store',
      'must be a Store (record, history, getJobState, setPaused), e.g. new MemoryStore().',
    );
  }
  return store as Store;
}

/** The scheduler's default lease: as given, or 30 s raised to the backend's minimum. */
function defaultLease(lock: Lock, leaseMs: unknown): number {
  const { capabilities } = lock;
  const backend = String(lock.backend);
  const wanted = leaseMs ?? Math.max(DEFAULT_LEASE_MS, capabilities.minLeaseMs);
  return normalizeLeaseMs('leaseMs', wanted, capabilities, backend);
}
