import { type Clock, realClock } from './clock.js';
import { BackendUnavailableError, InvalidOptionError } from './errors.js';
import {
  assertBatchSize,
  assertClaimRequest,
  assertLockKey,
  type BatchOptions,
  type ClaimedFire,
  type ClaimRequest,
  type ClaimResult,
  DEFAULT_EARLY_TOLERANCE_MS,
  DEFAULT_WINDOW_MS,
  type Lease,
  type Lock,
  type LockCapabilities,
  type LockInspection,
  type MarkReading,
} from './lock.js';
import { assertNonNegativeMs, assertPositiveMs } from './validate.js';

/** Options of {@link MemoryLock}. */
export interface MemoryLockOptions {
  /** The clock that plays the backend's clock (judges expiry and staleness). Default: real. */
  clock?: Clock;
  /** Claim window in ms. Default 5 minutes. */
  windowMs?: number;
  /**
   * A claim for a fire more than this far ahead of the lock's clock is refused `early`, in ms.
   * Default {@link DEFAULT_EARLY_TOLERANCE_MS}.
   */
  earlyToleranceMs?: number;
}

/** Most requests {@link MemoryLock.claimMany} (and `extendMany`/`releaseMany`) take in one call. */
export const MEMORY_MAX_BATCH = 10_000;

interface KeyState {
  /** Claim records by fire time. */
  fires: Map<number, ClaimedFire>;
  /** Live leases by slot: `x` for the exclusive lease, the fire time for per-fire leases. */
  leases: Map<string, Lease>;
  /** Last token issued for the key; kept forever so tokens never repeat. */
  lastToken: number;
  /** The newest fire ever recorded for the key (the catch-up mark); kept forever. */
  mark: number | null;
  /**
   * At most the oldest fire time in `fires` (`Infinity` when empty): the records are swept only
   * once this one is past the window by {@link SWEEP_SLACK}, not on every claim.
   */
  oldest: number;
}

/**
 * Claim records past their window are swept in bulk once the oldest is this fraction of the
 * window overdue (so a sweep, O(records of the key), runs at most once per window / 8 per key
 * instead of on every claim). Until then an overdue record is ignored (and dropped) when looked
 * up, so every answer is what it would be had it been collected on time.
 */
const SWEEP_SLACK = 1 / 8;

const slotOf = (lease: Pick<Lease, 'exclusive' | 'fireAt'>): string =>
  lease.exclusive ? 'x' : String(lease.fireAt);

/** The live lease of fire `fireAt` held by `owner` (exclusive slot or per-fire slot), if any. */
const heldBy = (state: KeyState, fireAt: number, owner: string, now: number) =>
  [state.leases.get('x'), state.leases.get(String(fireAt))].find(
    (l) => l && l.fireAt === fireAt && l.owner === owner && l.expiresAt > now,
  );

/**
 * The reference {@link Lock}: every rule of the contract, in process memory. Share one instance
 * between schedulers in one process to simulate a fleet (tests, demos); it gives no protection
 * across processes. The conformance suite runs against it first.
 */
export class MemoryLock implements Lock {
  readonly backend = 'memory';
  readonly capabilities: LockCapabilities;
  readonly windowMs: number;
  private readonly clock: Clock;
  private readonly earlyToleranceMs: number;
  private readonly keys = new Map<string, KeyState>();

  constructor(options: MemoryLockOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    assertPositiveMs('windowMs', this.windowMs);
    const earlyToleranceMs = options.earlyToleranceMs ?? DEFAULT_EARLY_TOLERANCE_MS;
    assertNonNegativeMs('earlyToleranceMs', earlyToleranceMs);
    this.earlyToleranceMs = earlyToleranceMs;
    this.capabilities = {
      ...{ minLeaseMs: 1, leaseGranularityMs: 1, durable: false },
      ...{ clock: 'backend', earlyToleranceMs, durableMark: false, maxBatch: MEMORY_MAX_BATCH },
    };
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    assertClaimRequest(request);
    return this.claimNow(request);
  }

  /**
   * Claims each request in array order through the same code as {@link MemoryLock.claim}, so
   * each answer is exactly what `claim` would have answered. Every request is validated before
   * any is applied; an aborted `options.signal` rejects with `BackendUnavailableError`.
   */
  async claimMany(
    requests: readonly ClaimRequest[],
    options: BatchOptions = {},
  ): Promise<ClaimResult[]> {
    assertBatchSize(requests, MEMORY_MAX_BATCH);
    for (const request of requests) assertClaimRequest(request);
    this.assertNotAborted('claimMany', options);
    return requests.map((request) => this.claimNow(request));
  }

  /** `results[i]` is what {@link MemoryLock.extend}`(leases[i], leaseMs[i])` answers. */
  async extendMany(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options: BatchOptions = {},
  ): Promise<(Lease | null)[]> {
    assertBatchSize(leases, MEMORY_MAX_BATCH);
    if (!Array.isArray(leaseMs) || leaseMs.length !== leases.length) {
      throw new InvalidOptionError(
        'leaseMs',
        'must be an array as long as leases (one per lease).',
      );
    }
    this.assertNotAborted('extendMany', options);
    return leases.map((lease, i) => this.extendNow(lease, leaseMs[i] as number));
  }

  /** `results[i]` is what {@link MemoryLock.release}`(leases[i])` answers. */
  async releaseMany(leases: readonly Lease[], options: BatchOptions = {}): Promise<boolean[]> {
    assertBatchSize(leases, MEMORY_MAX_BATCH);
    this.assertNotAborted('releaseMany', options);
    return leases.map((lease) => this.releaseNow(lease));
  }

  /** One claim, answered now (the body of `claim`, shared by `claimMany`). */
  private claimNow(request: ClaimRequest): ClaimResult {
    const now = this.clock.now();
    const result = this.decide(request, now);
    result.backendTime = now; // decide() built a fresh object: no copy needed
    return result;
  }

  /** A batch whose caller gave up is not applied (the contract's rule for aborted signals). */
  private assertNotAborted(operation: string, options: BatchOptions): void {
    if (options.signal?.aborted) {
      throw new BackendUnavailableError(this.backend, operation, options.signal.reason);
    }
  }

  private decide(request: ClaimRequest, now: number): ClaimResult {
    const { key, fireAt, owner, leaseMs, exclusive } = request;
    const state = this.stateOf(key);
    this.collect(state, now);

    const existing = this.record(state, fireAt, now);
    if (existing) {
      if (existing.owner === owner) return this.replay(state, existing, key, fireAt, now);
      return { status: 'lost', key, fireAt, reason: 'claimed' };
    }
    const { catchUp } = request;
    if (catchUp && state.mark !== null && fireAt <= state.mark) {
      // A re-sent catch-up claim whose record is already collected: the owner's live lease.
      const held = fireAt === state.mark ? heldBy(state, fireAt, owner, now) : undefined;
      if (held) return { status: 'won', lease: { ...held } };
      return { status: 'lost', key, fireAt, reason: 'behind_mark' };
    }
    const oldest = catchUp ? catchUp.since : now - this.windowMs;
    if (fireAt < oldest) return { status: 'lost', key, fireAt, reason: 'stale' };
    if (fireAt > now + this.earlyToleranceMs)
      return { status: 'lost', key, fireAt, reason: 'early' };
    state.mark = Math.max(state.mark ?? fireAt, fireAt);

    if (exclusive) {
      const live = state.leases.get('x');
      if (live && live.expiresAt > now) {
        this.keep(state, { fireAt, owner, outcome: 'busy', token: null });
        return { status: 'busy', key, fireAt };
      }
    }
    const lease: Lease = {
      key,
      fireAt,
      owner,
      token: ++state.lastToken,
      expiresAt: now + leaseMs,
      exclusive,
    };
    state.leases.set(slotOf(lease), lease);
    this.keep(state, { fireAt, owner, outcome: 'won', token: lease.token });
    return { status: 'won', lease: { ...lease } };
  }

  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    return this.extendNow(lease, leaseMs);
  }

  private extendNow(lease: Lease, leaseMs: number): Lease | null {
    const now = this.clock.now();
    const current = this.keys.get(lease.key)?.leases.get(slotOf(lease));
    if (!current || current.token !== lease.token || current.expiresAt <= now) return null;
    current.expiresAt = now + leaseMs;
    return { ...current, backendTime: now };
  }

  async release(lease: Lease): Promise<boolean> {
    return this.releaseNow(lease);
  }

  private releaseNow(lease: Lease): boolean {
    const state = this.keys.get(lease.key);
    const slot = slotOf(lease);
    const current = state?.leases.get(slot);
    if (!state || !current || current.token !== lease.token) return false;
    state.leases.delete(slot);
    return current.expiresAt > this.clock.now();
  }

  async withdraw(lease: Lease): Promise<boolean> {
    const state = this.keys.get(lease.key);
    const record = state && this.record(state, lease.fireAt, this.clock.now());
    if (!state || !record || record.outcome !== 'won' || record.token !== lease.token) return false;
    state.fires.delete(lease.fireAt);
    const slot = slotOf(lease);
    if (state.leases.get(slot)?.token === lease.token) state.leases.delete(slot);
    return true;
  }

  async inspect(key: string): Promise<LockInspection> {
    assertLockKey(key);
    const state = this.keys.get(key);
    if (!state) return { leases: [], newestFireAt: null, fires: [], mark: null };
    this.collect(state, this.clock.now(), true);
    const fires = [...state.fires.values()]
      .sort((a, b) => a.fireAt - b.fireAt)
      .map((f) => ({ ...f }));
    const leases = [...state.leases.values()]
      .sort((a, b) => a.fireAt - b.fireAt)
      .map((l) => ({ ...l }));
    return { leases, newestFireAt: fires.at(-1)?.fireAt ?? null, fires, mark: state.mark };
  }

  async readMarks(keys: readonly string[], options: BatchOptions = {}): Promise<MarkReading> {
    for (const key of keys) assertLockKey(key);
    this.assertNotAborted('readMarks', options);
    const marks = keys.map((key) => this.keys.get(key)?.mark ?? null);
    return { marks, backendTime: this.clock.now() };
  }

  /** Answers a claim re-sent by the owner that already holds the fire's record. */
  private replay(
    state: KeyState,
    record: ClaimedFire,
    key: string,
    fireAt: number,
    now: number,
  ): ClaimResult {
    if (record.outcome === 'busy') return { status: 'busy', key, fireAt };
    for (const exclusive of [true, false]) {
      const lease = state.leases.get(slotOf({ exclusive, fireAt }));
      if (lease && lease.token === record.token && lease.expiresAt > now) {
        return { status: 'won', lease: { ...lease } };
      }
    }
    return { status: 'lost', key, fireAt, reason: 'claimed' };
  }

  private stateOf(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      const fires = new Map<number, ClaimedFire>();
      const oldest = Number.POSITIVE_INFINITY;
      state = { fires, leases: new Map(), lastToken: 0, mark: null, oldest };
      this.keys.set(key, state);
    }
    return state;
  }

  /** The claim record of `fireAt`, unless it is past its window (then it is dropped now). */
  private record(state: KeyState, fireAt: number, now: number): ClaimedFire | undefined {
    const record = state.fires.get(fireAt);
    if (record && fireAt + this.windowMs < now) {
      state.fires.delete(fireAt);
      return undefined;
    }
    return record;
  }

  private keep(state: KeyState, record: ClaimedFire): void {
    state.fires.set(record.fireAt, record);
    if (record.fireAt < state.oldest) state.oldest = record.fireAt;
  }

  /**
   * Drops expired leases, and claim records past `fireAt + windowMs`: all of them when `exact`
   * (inspect), else only once the oldest is overdue by {@link SWEEP_SLACK} of the window.
   */
  private collect(state: KeyState, now: number, exact = false): void {
    for (const [slot, lease] of state.leases) {
      if (lease.expiresAt <= now) state.leases.delete(slot);
    }
    const slack = exact ? 0 : this.windowMs * SWEEP_SLACK;
    if (state.oldest + this.windowMs + slack >= now) return;
    let oldest = Number.POSITIVE_INFINITY;
    for (const fireAt of state.fires.keys()) {
      if (fireAt + this.windowMs < now) state.fires.delete(fireAt);
      else if (fireAt < oldest) oldest = fireAt;
    }
    state.oldest = oldest;
  }
}
