/**
 * The Lock contract: how an instance claims one fire of one job for itself, fleet-wide.
 *
 * Times in this contract are epoch milliseconds (integers): every backend stores them as
 * integers, and numbers cannot be mutated by accident the way `Date` objects can.
 */

import { InvalidOptionError } from './errors.js';

/** Default claim window: how long a fire stays claimable, and how long its claim is kept. */
export const DEFAULT_WINDOW_MS = 5 * 60_000;

/**
 * Default early tolerance: a claim for a fire more than this far ahead of the backend's clock is
 * refused `early` (see {@link LockCapabilities.earlyToleranceMs}).
 */
export const DEFAULT_EARLY_TOLERANCE_MS = 250;

/** A request to claim fire `fireAt` of job `key` for `owner`. */
export interface ClaimRequest {
  /**
   * The job's name (or the scheduler's key of a shard part). Any well-formed Unicode string
   * (spaces, `/`, `{}`, control characters); a lone surrogate is refused ({@link assertLockKey}).
   */
  key: string;
  /** The scheduled fire time, epoch ms. Identifies the fire fleet-wide. */
  fireAt: number;
  /** The claiming instance's id. */
  owner: string;
  /** How long the lease lasts unless extended, in ms. */
  leaseMs: number;
  /**
   * `true`: the job must not overlap itself: when a live lease of `key` exists the fire is
   * recorded and answered `busy`. `false`: the fire gets its own lease, independent of the
   * leases of other fires of the same job.
   */
  exclusive: boolean;
  /**
   * Aborted when the caller gives up on this claim (its local deadline passed, fail closed).
   * Once it is aborted the adapter must not send, send from a client-side queue, or re-send
   * the claim (pg pool queue, ioredis offline queue and re-sends, etcd retries): it rejects with
   * `BackendUnavailableError` instead. A claim already on the wire cannot be called back; its
   * late win is handed back with {@link Lock.withdraw}.
   */
  signal?: AbortSignal;
  /**
   * Set to claim a fire missed while the whole fleet was down (catch-up, see DESIGN.md "Fleet
   * control"). A catch-up claim of fire `T` wins only if `T` is newer than the job's mark (see
   * {@link LockInspection.mark}) and unclaimed, and then moves the mark to `T`; a fire at or
   * behind the mark is answered `lost`/`behind_mark`, except a re-sent claim of the mark's fire
   * by the owner that still holds its live lease, which gets that lease again (the fire's claim
   * record may be collected already). The claim window does not apply: the
   * fire is `stale` only when older than `catchUp.since` (the oldest fire the caller may catch
   * up, i.e. `now - within` by its policy). Fires ahead of the backend's clock are still
   * refused `early`. Requires a lock whose capabilities declare `durableMark`.
   */
  catchUp?: CatchUpClaim;
}

/** The catch-up part of a {@link ClaimRequest}. */
export interface CatchUpClaim {
  /** The oldest fire the caller may catch up, epoch ms: older fires are answered `stale`. */
  since: number;
}

/** A granted lease: proof that `owner` holds fire `fireAt` of `key` until `expiresAt`. */
export interface Lease {
  key: string;
  fireAt: number;
  owner: string;
  /** Fencing token: an integer that strictly increases per key, across owners and restarts. */
  token: number;
  /** When the lease expires by the backend's clock, epoch ms (informational for clients). */
  expiresAt: number;
  /** Whether this is the job's exclusive lease or a per-fire lease. */
  exclusive: boolean;
  /**
   * On the lease {@link Lock.extend} returns: the backend's clock when it renewed, epoch ms (a
   * claim's time is on its {@link ClaimResult}). Optional: a lock that cannot tell leaves it
   * out, and the scheduler then uses its own clock.
   */
  backendTime?: number;
}

/** Why a claim was `lost`. */
export type LostReason =
  /** The fire was already claimed (by another owner, or by this owner with another answer). */
  | 'claimed'
  /** The fire is older than the claim window by the backend's clock. */
  | 'stale'
  /**
   * The fire is more than the lock's `earlyToleranceMs` ahead of the backend's clock (the
   * claiming instance's clock runs fast). Nothing is recorded: the same claim sent once the
   * backend's clock reaches the fire wins. Locks without `earlyToleranceMs` refuse only claims
   * more than the claim window ahead.
   */
  | 'early'
  /**
   * A catch-up claim of a fire at or behind the job's mark (the newest fire ever claimed): the
   * fire ran, was skipped, or is older than one that was claimed. Nothing is recorded.
   */
  | 'behind_mark';

/**
 * The answer to a claim. `backendTime`: the backend's clock when it executed the claim, epoch
 * ms (optional: a lock that cannot tell leaves it out; the scheduler then uses its own clock).
 */
export type ClaimResult =
  | { status: 'won'; lease: Lease; backendTime?: number }
  | { status: 'busy'; key: string; fireAt: number; backendTime?: number }
  | { status: 'lost'; key: string; fireAt: number; reason: LostReason; backendTime?: number };

/** One claimed fire, as kept by the backend for the claim window. */
export interface ClaimedFire {
  fireAt: number;
  owner: string;
  /** `won`: the owner got a lease with `token`; `busy`: the fire was recorded as skipped. */
  outcome: 'won' | 'busy';
  /** Fencing token of the lease granted for this fire; `null` when the outcome was `busy`. */
  token: number | null;
}

/** What a backend holds for one key (for tests, dashboards and catch-up). */
export interface LockInspection {
  /** Live leases of the key: the exclusive one and any per-fire ones, oldest fire first. */
  leases: Lease[];
  /** The newest claimed fire still kept, or `null`. */
  newestFireAt: number | null;
  /** Claimed fires still kept (not yet collected), oldest first. */
  fires: ClaimedFire[];
  /**
   * The job's mark: the newest fire ever claimed for the key (`won` or `busy`, by ordinary or
   * catch-up claims), or `null` when none was. Unlike claim records it is never collected while
   * the backend keeps the key; it only moves forward (a withdrawn claim does not move it back).
   * Locks without a mark (`capabilities.durableMark` absent) answer `null`.
   */
  mark: number | null;
}

/** What {@link Lock.readMarks} answers. */
export interface MarkReading {
  /** `marks[i]` is the mark of `keys[i]`: the newest fire ever claimed for it, or `null`. */
  marks: (number | null)[];
  /**
   * The backend's clock when it read the marks (epoch ms), where the backend has one; the
   * scheduler samples the fleet's clock from it as from a claim's answer.
   */
  backendTime?: number;
}

/**
 * What a backend can do, declared as data. The scheduler reads it to validate options at
 * `add()` time, the conformance suite to adapt its timings and pick the scenarios that apply.
 */
export interface LockCapabilities {
  /** Shortest lease the backend can hold, in ms (etcd: 2000). */
  minLeaseMs: number;
  /** Leases are rounded up to a multiple of this, in ms (etcd: 1000; others: 1). */
  leaseGranularityMs: number;
  /** Claim records and leases survive a server restart (no duplicate runs after one). */
  durable: boolean;
  /**
   * Whose clock judges lease expiry and staleness: `backend` (PostgreSQL `now()`, Redis `TIME`)
   * or `client` (the adapter's own clock, with a documented bound).
   */
  clock: 'backend' | 'client';
  /**
   * How far ahead of the backend's clock a fire may be and still be claimed, in ms: a claim for
   * a fire later than `backend now + earlyToleranceMs` is refused `lost`/`early` (with the
   * backend's time), and the scheduler claims again when the fleet's clock reaches the fire.
   * Optional for third-party locks: without it the lock refuses only claims more than the claim
   * window ahead, and a fast clock may start fires early.
   */
  earlyToleranceMs?: number;
  /**
   * Set by a `clock: 'client'` lock that still reports `backendTime` and judges `early` by the
   * backend's clock, estimated rather than read (etcd: from its HTTP `Date` header): the
   * estimate's error bound, ms. Absent on `clock: 'backend'` locks (their time is read).
   */
  backendTimeBoundMs?: number;
  /**
   * The lock keeps the per-job mark of the newest claimed fire and accepts catch-up claims
   * ({@link ClaimRequest.catchUp}). `true`: the mark survives a server restart (catch-up never
   * replays a fire that ran). `false`: the mark is kept, but lost with the backend's memory
   * (MemoryLock, Redis without persistence): after a restart a catch-up claim may run a fire that
   * already ran. Absent: the lock has no mark (it may not even know `ClaimRequest.catchUp` and
   * treat such a claim as an ordinary one), so it must not be sent catch-up claims; the
   * scheduler then accepts only `catchUp: 'skip'`.
   */
  durableMark?: boolean;
  /**
   * Set by a lock that implements {@link Lock.claimMany} (and may implement
   * {@link Lock.extendMany} / {@link Lock.releaseMany}): the most requests it takes in one call.
   * The scheduler sends fires due together in batches of at most
   * `min(maxBatch, SchedulerOptions.claimBatchSize)`. Absent: the lock claims one fire per call
   * and the scheduler sends single claims, at most `maxConcurrentClaims` at a time.
   */
  maxBatch?: number;
}

/** Options of one batched call ({@link Lock.claimMany}, {@link Lock.extendMany}, {@link Lock.releaseMany}). */
export interface BatchOptions {
  /**
   * Aborted when the caller gives up on the whole batch. Same rule as
   * {@link ClaimRequest.signal}: once aborted, the adapter must not send, queue or re-send any
   * part of the batch; it rejects with `BackendUnavailableError`. Per-request `signal`s in a
   * batch are ignored by the adapter (the scheduler drops requests it gave up on before sending).
   */
  signal?: AbortSignal;
}

/**
 * A fleet-wide lock over fires. Implementations must:
 *
 * - claim in one atomic step: a fire is won by exactly one owner, ever, within the window;
 * - keep each claim record at least until `fireAt + windowMs`, then collect it;
 * - accept ordinary claims in any order inside the window (the mark never refuses them);
 * - keep a per-job mark of the newest claimed fire, moved forward by every claim that records a
 *   fire, never collected while the key exists, and judge catch-up claims by it (when
 *   `capabilities.durableMark` is declared);
 * - answer a re-sent identical claim from the same owner with the same result and lease;
 * - issue tokens that strictly increase per key;
 * - throw {@link BackendUnavailableError} (never answer `lost`) when the backend cannot be reached.
 */
export interface Lock {
  /** Backend name used in errors, events and metrics, e.g. `memory`, `postgres`. */
  readonly backend: string;
  /** What this backend can do. */
  readonly capabilities: LockCapabilities;
  /** The claim window in ms: fires older than `now - windowMs` are stale. */
  readonly windowMs: number;
  /**
   * Claims fire `request.fireAt` of `request.key` for `request.owner`, and moves the key's mark
   * when a fire is recorded (`won` or `busy`). One round trip, catch-up claims included.
   */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /**
   * Claims many fires in as few round trips as the backend allows (PostgreSQL: one statement;
   * Redis: one script call per hash slot; see each adapter's README). Answers `results[i]` for
   * `requests[i]`, each exactly as {@link Lock.claim} would have answered that request alone
   * (won/busy/lost with reason, token, lease, mark, idempotent re-send), in the same order; the
   * requests are applied in array order, so two requests of the same key see each other.
   * `requests.length` is at most `capabilities.maxBatch`; more throws `InvalidOptionError` (see
   * {@link assertBatchSize}). An empty
   * array answers `[]` without a round trip. Throws {@link BackendUnavailableError} when the
   * backend cannot be reached (no partial answers: a batch that may have been applied in part is
   * re-sent whole, and idempotence answers the applied part the same again). Optional: declare
   * `capabilities.maxBatch` with it.
   */
  claimMany?(requests: readonly ClaimRequest[], options?: BatchOptions): Promise<ClaimResult[]>;
  /**
   * Renews many leases in one round trip where the backend allows: `results[i]` is what
   * {@link Lock.extend}`(leases[i], leaseMs[i])` would answer. Optional.
   */
  extendMany?(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options?: BatchOptions,
  ): Promise<(Lease | null)[]>;
  /**
   * Ends many leases in one round trip where the backend allows: `results[i]` is what
   * {@link Lock.release}`(leases[i])` would answer. Optional.
   */
  releaseMany?(leases: readonly Lease[], options?: BatchOptions): Promise<boolean[]>;
  /** Renews `lease` for `leaseMs` from now; `null` when it is no longer held by its owner. */
  extend(lease: Lease, leaseMs: number): Promise<Lease | null>;
  /**
   * Ends `lease` early. Never removes the fire's claim record and never touches a lease held
   * under another token. Resolves `true` when the lease was still held and is now released.
   */
  release(lease: Lease): Promise<boolean>;
  /**
   * Hands back a won claim that its owner will never run (the scheduler gave up on the claim
   * before its answer came, or its lease expired before the job could start): removes the lease
   * and the fire's claim record if the record still holds `lease.token`, so another instance can
   * still claim the fire inside its window. Never touches a record or lease of another token.
   * Resolves `true` when the claim was withdrawn. Optional: without it the scheduler releases
   * the lease and the fire stays claimed (it does not run).
   */
  withdraw?(lease: Lease): Promise<boolean>;
  /** Reads what the backend holds for `key`. */
  inspect(key: string): Promise<LockInspection>;
  /**
   * Reads the marks of many keys at once: `marks[i]` is what `inspect(keys[i]).mark` would
   * answer, in as few round trips as the backend allows (PostgreSQL: one statement; Redis: one
   * script call per hash slot, sent together; see each adapter's README), with the backend's clock at the read
   * (`backendTime`, where the backend has one). Any number of keys: the adapter splits them where
   * its backend bounds a request (etcd: `--max-txn-ops`). Checks every key as
   * {@link assertLockKey} does before sending any. An empty array answers `{ marks: [] }` without a
   * round trip. Throws {@link BackendUnavailableError} when the backend cannot be reached.
   * The scheduler reads the marks of all its jobs with it at `start()` (the catch-up pass), so a
   * scheduler with 10,000 jobs holds none of them back for a mark read each. Optional; only for
   * locks that declare `capabilities.durableMark` (others answer `null` marks). Without it the
   * scheduler calls {@link Lock.inspect} per job.
   */
  readMarks?(keys: readonly string[], options?: BatchOptions): Promise<MarkReading>;
  /**
   * Frees resources the adapter created itself (timers, etcd leases). Never closes the client
   * the user passed in. Optional.
   */
  close?(): Promise<void>;
}

/**
 * Checks the catch-up part of a claim (adapters call it before sending): `catchUp.since` must be
 * an integer epoch ms. Throws {@link InvalidOptionError} naming `catchUp.since` otherwise.
 */
export function assertCatchUpClaim(request: ClaimRequest): void {
  if (request.catchUp === undefined) return;
  const since = (request.catchUp as Partial<CatchUpClaim> | null)?.since;
  if (typeof since !== 'number' || !Number.isSafeInteger(since)) {
    throw new InvalidOptionError(
      'catchUp.since',
      `must be an integer epoch ms (the oldest fire to catch up), got ${String(since)}`,
    );
  }
}

/**
 * Checks a lock key (adapters call it before sending a claim or an inspect): a string of
 * well-formed Unicode (the empty string included). A lone UTF-16 surrogate cannot be encoded the same way by every backend
 * (PostgreSQL and SQLite store text as UTF-8 and would turn it into U+FFFD, so two different keys
 * would meet; etcd's key encoding throws), so it is refused with {@link InvalidOptionError}
 * naming `key`. Control characters are allowed (the scheduler's shard keys use U+001F).
 */
export function assertLockKey(key: unknown): asserts key is string {
  if (typeof key !== 'string') {
    throw new InvalidOptionError('key', `must be a string, got ${typeof key}`);
  }
  // `isWellFormed` (ES2024, Node ≥ 20) is the per-claim fast path; the regex finds the index
  if ((key as unknown as { isWellFormed(): boolean }).isWellFormed()) return;
  const lone = /\p{Cs}/u.exec(key); // in a `u` regex only LONE surrogates match
  if (lone !== null) {
    throw new InvalidOptionError(
      'key',
      `must be well-formed Unicode, got a lone surrogate (half of a UTF-16 pair) at index ${lone.index}; use the whole character`,
    );
  }
}

/**
 * Checks one claim request before it is sent: its key ({@link assertLockKey}) and its catch-up
 * part ({@link assertCatchUpClaim}). Throws {@link InvalidOptionError} naming the field.
 */
export function assertClaimRequest(request: ClaimRequest): void {
  assertLockKey(request.key);
  assertCatchUpClaim(request);
}

/**
 * Checks the size of a batch (adapters call it first in `claimMany`, `extendMany` and
 * `releaseMany`): throws {@link InvalidOptionError} naming `requests` when there are more than
 * `maxBatch` items, or when `items` is not an array.
 */
export function assertBatchSize(items: readonly unknown[], maxBatch: number): void {
  if (!Array.isArray(items)) {
    throw new InvalidOptionError(
      'requests',
      `must be an array of claim requests, got ${typeof items}`,
    );
  }
  if (items.length > maxBatch) {
    throw new InvalidOptionError(
      'requests',
      `holds ${items.length} items, more than this lock takes in one call (capabilities.maxBatch = ${maxBatch}); split it`,
    );
  }
}
