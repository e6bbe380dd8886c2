import {
  assertCatchUpClaim,
  BackendUnavailableError,
  type ClaimedFire,
  type ClaimRequest,
  type ClaimResult,
  type Clock,
  DEFAULT_EARLY_TOLERANCE_MS,
  type Lease,
  LeaseTooShortError,
  type Lock,
  type LockCapabilities,
  type LockInspection,
} from '@fleetcron/core';
import {
  type Etcd3,
  EtcdLeaseInvalidError,
  type ICompare,
  type IKeyValue,
  type ITxnResponse,
} from 'etcd3';
import { type EtcdClock, etcdClockOf } from './etcd-clock.js';
import { fireAtOfKey, KeyLayout } from './keys.js';
import { JobLeasePool, type PooledLease } from './lease-pool.js';
import { lockClientOf } from './lock-client.js';
import { type EtcdLockOptions, type ResolvedOptions, resolveOptions } from './options.js';
import { RecordLeases } from './record-leases.js';
import {
  absent,
  BACKEND,
  createdAt,
  deleteOp,
  EtcdRpc,
  getOp,
  getPrefixOp,
  kvsOf,
  markBefore,
  markOf,
  modifiedAt,
  moveMarkOp,
  parseValue,
  putOp,
} from './rpc.js';

/** etcd's smallest lease: 2 s (TTLs are whole seconds). */
export const ETCD_MIN_LEASE_MS = 2_000;

/** Value of a claim record (`c/` key). The token is the record's create revision. */
interface ClaimValue {
  owner: string;
  outcome: 'won' | 'busy';
}

/** Value of a lease key (`x/` or `f/`). The token is the key's create revision. */
interface LeaseValue {
  owner: string;
  fireAt: number;
  /** Expiry reported at claim time (adapter clock); informational. */
  expiresAt: number;
}

/** What this adapter knows about a lease it granted or replayed. */
interface Held {
  /** etcd lease that carries the lease key. */
  leaseId: string;
  /** Latest expiry reported to the holder (adapter clock). */
  expiresAt: number;
}

/** How often a claim re-reads when the exclusive lease changes under it (rare path). */
const MAX_ATTEMPTS = 8;
/** `held` is swept of abandoned entries once it grows past this size. */
const HELD_SWEEP_SIZE = 256;
/** Spare leases are kept alive this often, in ms (see {@link JobLeasePool}). */
const REFRESH_MS = 400;

/**
 * A fleetcron {@link Lock} on etcd v3 (through the `etcd3` client).
 *
 * A claim is one transaction: "if the fire's claim record does not exist (and, for an exclusive
 * claim, the job's lease key does not exist) then put both, else read the record and both lease
 * keys". The fencing token is the revision of that transaction — etcd's cluster-wide revision,
 * strictly increasing and persisted, so tokens increase per key across owners and restarts.
 * Lease keys expire through etcd leases (judged by the server); claim records expire through
 * bucketed etcd leases once their window has passed. Staleness is judged by the adapter's clock:
 * see the package README for the bound this relies on.
 *
 * The adapter never closes the client it is given; `close()` revokes the job leases it granted
 * and stops its keepalives.
 */
export class EtcdLock implements Lock {
  readonly backend = BACKEND;
  readonly capabilities: LockCapabilities = {
    minLeaseMs: ETCD_MIN_LEASE_MS,
    leaseGranularityMs: 1_000,
    durable: true,
    clock: 'client',
    earlyToleranceMs: DEFAULT_EARLY_TOLERANCE_MS,
    durableMark: true,
  };
  readonly windowMs: number;
  /** Prefix of every key this adapter reads and writes. */
  readonly prefix: string;
  private readonly clock: Clock;
  private readonly keys: KeyLayout;
  private readonly rpc: EtcdRpc;
  private readonly pool: JobLeasePool;
  private readonly records: RecordLeases;
  private readonly held = new Map<string, Held>();
  /** The lock's own client (see {@link lockClientOf}): no retries, no circuit breaker. */
  private readonly client: Etcd3;
  /** The etcd host's clock (README, "The fleet's clock"); `null` when turned off. */
  private readonly etcdClock: EtcdClock | null;
  private closed = false;

  /**
   * @param client Your `Etcd3` client; never closed. The lock makes its calls through a client
   *   of its own built from the same options (hosts, credentials, gRPC options) but without
   *   etcd3's retry and circuit-breaker policies (see README, "After a server restart").
   */
  constructor(client: Etcd3, options: EtcdLockOptions = {}) {
    const resolved: ResolvedOptions = resolveOptions(options);
    this.windowMs = resolved.windowMs;
    this.capabilities.earlyToleranceMs = resolved.earlyToleranceMs;
    this.prefix = resolved.prefix;
    this.clock = resolved.clock;
    this.keys = new KeyLayout(resolved.prefix);
    this.client = lockClientOf(client);
    this.rpc = new EtcdRpc(this.client, resolved.requestTimeoutMs);
    this.pool = new JobLeasePool(this.rpc, {
      spares: resolved.spareLeases,
      refreshMs: REFRESH_MS,
    });
    this.records = new RecordLeases(
      this.rpc,
      this.clock,
      resolved.windowMs,
      resolved.skewToleranceMs,
    );
    this.etcdClock = etcdClockOf(this.client, resolved);
    if (resolved.etcdClock) this.capabilities.backendTimeBoundMs = resolved.etcdClock.maxErrorMs;
  }

  /**
   * The etcd host's clock minus this lock's `clock`, ms, with its error bound; `null` before the
   * first measurement (at the first claim) or when `etcdClock: false`.
   */
  etcdClockOffset(): { offsetMs: number; boundMs: number } | null {
    const etcdNow = this.etcdClock?.now() ?? null;
    const boundMs = this.etcdClock?.boundMs() ?? null;
    if (etcdNow === null || boundMs === null) return null;
    return { offsetMs: etcdNow - this.clock.now(), boundMs };
  }

  /**
   * Claims a fire (see {@link Lock.claim}). `early` is judged by the etcd host's clock as
   * measured (the first claim waits for the first measurement, at most ~1.5 s), and every answer
   * carries that clock as `backendTime`; without a measurement, by `clock`, with no `backendTime`.
   */
  async claim(request: ClaimRequest): Promise<ClaimResult> {
    this.assertOpen('claim');
    // The claim is judged as of its arrival, even when it waited for the first measurement.
    const arrivedAt = performance.now();
    const now = this.clock.now();
    await this.etcdClock?.ready();
    const etcdNow = this.etcdClock?.now() ?? null;
    const etcdAtArrival = etcdNow === null ? null : etcdNow - (performance.now() - arrivedAt);
    const result = await this.claimAt(request, now, etcdAtArrival);
    const backendTime = this.etcdClock?.now() ?? null;
    return backendTime === null ? result : { ...result, backendTime };
  }

  /**
   * `now`: the adapter's clock at the claim's arrival; `etcdNow`: the etcd host's clock then, as
   * measured (`null` without a measurement), which judges `stale` and `early` when known.
   */
  private async claimAt(
    request: ClaimRequest,
    now: number,
    etcdNow: number | null,
  ): Promise<ClaimResult> {
    this.assertOpen('claim');
    const { key, fireAt, leaseMs } = request;
    if (!(leaseMs >= ETCD_MIN_LEASE_MS)) {
      throw new LeaseTooShortError('leaseMs', leaseMs, ETCD_MIN_LEASE_MS, BACKEND);
    }
    assertCatchUpClaim(request);
    const startedAt = performance.now();
    // Catch-up claims are bounded by their `since` instead of the window (the mark guards them).
    const oldest = request.catchUp ? request.catchUp.since : (etcdNow ?? now) - this.windowMs;
    if (fireAt < oldest) return { status: 'lost', key, fireAt, reason: 'stale' };
    if (this.held.size > HELD_SWEEP_SIZE) this.sweepHeld(now);

    const claimKey = this.keys.claim(key, fireAt);
    if (fireAt > (etcdNow ?? now) + resolvedEarly(this.capabilities)) {
      // Too early by the etcd host's clock as measured (or this clock without a measurement),
      // unless the fire is already recorded (then answer as for it). README, "The fleet's clock".
      const res = await this.rpc.txn(
        'claim',
        [absent(claimKey)],
        [],
        this.reads(request),
        request.signal,
      );
      if (res.succeeded) return { status: 'lost', key, fireAt, reason: 'early' };
      return this.answerRecorded(request, res, now);
    }

    let retriedLeases = false;
    // A catch-up claim wins only ahead of the mark: "the mark is older", or "there is no mark"
    // (etcd cannot compare a missing key's value; a failed claim's reads say which applies).
    const markKey = this.keys.mark(key);
    let markGuard: ICompare[] = request.catchUp ? [markBefore(markKey, fireAt)] : [];
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const [recordLease, jobLease] = await this.leasesFor(fireAt, leaseMs, startedAt);
      let res: ITxnResponse;
      try {
        res = await this.tryWin(request, recordLease, jobLease, now, markGuard);
      } catch (error) {
        if (error instanceof EtcdLeaseInvalidError && !retriedLeases) {
          // A lease we cached expired under us (clock jump, server restored from backup): drop
          // both and try once more with fresh ones.
          retriedLeases = true;
          this.records.invalidate(recordLease);
          this.pool.forget(jobLease.id);
          continue;
        }
        // Unknown outcome: the lease may carry a won key. Revoke it; a replay answers `lost`.
        this.pool.discard(jobLease);
        throw error instanceof EtcdLeaseInvalidError
          ? new BackendUnavailableError(BACKEND, 'claim', error)
          : error;
      }
      if (res.succeeded) {
        const slot = this.keys.slot(request);
        const token = res.header.revision;
        const expiresAt = now + leaseMs;
        this.held.set(heldKey(slot, token), { leaseId: jobLease.id, expiresAt });
        return { status: 'won', lease: { ...leaseOf(request, Number(token), expiresAt) } };
      }
      if (!usesLease(res, jobLease)) this.pool.giveBack(jobLease);
      if (kvsOf(res, 0)[0]) return this.answerRecorded(request, res, now);
      if (request.catchUp) {
        const mark = markOf(kvsOf(res, 3)[0]);
        if (mark !== null && fireAt <= mark) {
          const replay = fireAt === mark ? this.replayCatchUp(request, res, now) : undefined;
          return replay ?? { status: 'lost', key, fireAt, reason: 'behind_mark' };
        }
        const guard = mark === null ? absent(markKey) : markBefore(markKey, fireAt);
        if (guard.target !== markGuard[0]?.target) {
          markGuard = [guard];
          continue;
        }
      }

      // No record, but the job's exclusive lease is live: record the fire as busy, atomically
      // with "still no record and still the same lease".
      const live = kvsOf(res, 1)[0];
      if (!live) continue;
      let busy: ITxnResponse;
      try {
        busy = await this.rpc.txn(
          'claim',
          [absent(claimKey), modifiedAt(this.keys.exclusive(key), live.mod_revision), ...markGuard],
          [
            putOp(
              claimKey,
              { owner: request.owner, outcome: 'busy' } satisfies ClaimValue,
              recordLease,
            ),
            moveMarkOp(markKey, fireAt),
          ],
          this.reads(request),
          request.signal,
        );
      } catch (error) {
        if (!(error instanceof EtcdLeaseInvalidError) || retriedLeases) {
          throw error instanceof EtcdLeaseInvalidError
            ? new BackendUnavailableError(BACKEND, 'claim', error)
            : error;
        }
        retriedLeases = true;
        this.records.invalidate(recordLease);
        continue;
      }
      if (busy.succeeded) return { status: 'busy', key, fireAt };
      if (kvsOf(busy, 0)[0]) return this.answerRecorded(request, busy, now);
      // The exclusive lease (or the mark) changed between the two transactions: start over.
    }
    throw new BackendUnavailableError(
      BACKEND,
      'claim',
      new Error(`the exclusive lease of ${JSON.stringify(key)} kept changing; gave up`),
    );
  }

  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    this.assertOpen('extend');
    if (!(leaseMs >= ETCD_MIN_LEASE_MS)) {
      throw new LeaseTooShortError('leaseMs', leaseMs, ETCD_MIN_LEASE_MS, BACKEND);
    }
    const slot = this.keys.slot(lease);
    const hk = heldKey(slot, lease.token);
    let held = this.held.get(hk);
    if (!held) {
      // Not claimed through this adapter: find the etcd lease that carries the key.
      const res = await this.rpc.txn('extend', [createdAt(slot, lease.token)], [getOp(slot)], []);
      const kv = res.succeeded ? kvsOf(res, 0)[0] : undefined;
      if (!kv || kv.lease === '0') return null;
      held = { leaseId: kv.lease, expiresAt: lease.expiresAt };
      this.held.set(hk, held);
    }
    const sentAt = performance.now();
    const now = this.clock.now();
    const ttlSec = (await this.rpc.keepAlive('extend', [held.leaseId])).get(held.leaseId) ?? 0;
    if (ttlSec <= 0) {
      // The server let the lease expire (holder paused or partitioned) or it was revoked.
      this.held.delete(hk);
      this.pool.forget(held.leaseId);
      return null;
    }
    const pooled = this.pool.owns(held.leaseId);
    if (pooled) pooled.refreshedAt = sentAt;
    if (
      ttlSec * 1000 < leaseMs &&
      !(await this.reattach(lease, slot, held, leaseMs, sentAt, now))
    ) {
      this.held.delete(hk);
      return null;
    }
    held.expiresAt = now + leaseMs;
    const backendTime = this.etcdClock?.now() ?? null;
    const renewed = { ...lease, expiresAt: held.expiresAt };
    return backendTime === null ? renewed : { ...renewed, backendTime };
  }

  async release(lease: Lease): Promise<boolean> {
    this.assertOpen('release');
    const slot = this.keys.slot(lease);
    const hk = heldKey(slot, lease.token);
    const held = this.held.get(hk);
    this.held.delete(hk);
    let res: ITxnResponse;
    try {
      res = await this.rpc.txn(
        'release',
        [createdAt(slot, lease.token)],
        [getOp(slot), deleteOp(slot)],
        [],
      );
    } catch (error) {
      // Unknown outcome: revoke the etcd lease, which deletes the key if the delete did not run.
      const pooled = held && this.pool.owns(held.leaseId);
      if (pooled) this.pool.discard(pooled);
      throw error;
    }
    const leaseId = kvsOf(res, 0)[0]?.lease ?? held?.leaseId;
    if (leaseId && leaseId !== '0') {
      const pooled = this.pool.owns(leaseId);
      // The etcd lease carries no key now: reuse ours; revoke another adapter's, so that its
      // keepalive-based extend answers null.
      if (pooled) this.pool.giveBack(pooled);
      else if (res.succeeded) this.pool.revokeInBackground(leaseId);
    }
    return res.succeeded;
  }

  /**
   * Hands back a won claim that will never run, in one transaction: if the fire's claim record
   * still holds `lease.token` (its create revision), delete it, and (nested transaction) the
   * lease key too if it still holds that token. See {@link Lock.withdraw}.
   */
  async withdraw(lease: Lease): Promise<boolean> {
    this.assertOpen('withdraw');
    const claimKey = this.keys.claim(lease.key, lease.fireAt);
    const slot = this.keys.slot(lease);
    const hk = heldKey(slot, lease.token);
    const held = this.held.get(hk);
    const res = await this.rpc.txn(
      'withdraw',
      [createdAt(claimKey, lease.token)],
      [
        deleteOp(claimKey),
        {
          request_txn: {
            compare: [createdAt(slot, lease.token)],
            success: [getOp(slot), deleteOp(slot)],
            failure: [],
          },
        },
      ],
      [],
    );
    if (!res.succeeded) return false;
    this.held.delete(hk);
    const inner = res.responses[1]?.response_txn;
    const leaseId = inner?.succeeded ? kvsOf(inner, 0)[0]?.lease : held?.leaseId;
    if (inner?.succeeded && leaseId && leaseId !== '0') {
      const pooled = this.pool.owns(leaseId);
      if (pooled) this.pool.giveBack(pooled);
      else this.pool.revokeInBackground(leaseId);
    }
    return true;
  }

  async inspect(key: string): Promise<LockInspection> {
    this.assertOpen('inspect');
    const res = await this.rpc.txn(
      'inspect',
      [],
      [
        getPrefixOp(this.keys.claimPrefix(key)),
        getOp(this.keys.exclusive(key)),
        getPrefixOp(this.keys.perFirePrefix(key)),
        getOp(this.keys.mark(key)),
      ],
      [],
    );
    const now = this.clock.now();
    const fires: ClaimedFire[] = [];
    for (const kv of kvsOf(res, 0)) {
      const value = parseValue<ClaimValue>(kv);
      const fireAt = fireAtOfKey(kv.key);
      // Past its window: logically collected (etcd deletes it when its bucket lease expires).
      if (!value || fireAt + this.windowMs < now) continue;
      const token = value.outcome === 'won' ? Number(kv.create_revision) : null;
      fires.push({ fireAt, owner: value.owner, outcome: value.outcome, token });
    }
    fires.sort((a, b) => a.fireAt - b.fireAt);
    const leases: Lease[] = [];
    for (const [kv, exclusive] of [
      ...kvsOf(res, 1).map((kv) => [kv, true] as const),
      ...kvsOf(res, 2).map((kv) => [kv, false] as const),
    ]) {
      const value = parseValue<LeaseValue>(kv);
      if (!value) continue;
      const token = Number(kv.create_revision);
      const held = this.held.get(heldKey(kv.key, kv.create_revision));
      leases.push({
        key,
        fireAt: value.fireAt,
        owner: value.owner,
        token,
        expiresAt: held?.expiresAt ?? value.expiresAt,
        exclusive,
      });
    }
    leases.sort((a, b) => a.fireAt - b.fireAt);
    return {
      leases,
      newestFireAt: fires.at(-1)?.fireAt ?? null,
      fires,
      mark: markOf(kvsOf(res, 3)[0]),
    };
  }

  /**
   * Revokes the job leases this adapter granted (ending any lease still held) and stops the
   * keepalives. Claim records stay until their window has passed. Never closes the client.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.etcdClock?.close();
    this.held.clear();
    this.records.close();
    await this.pool.close();
    this.client.close();
  }

  /**
   * The claim transaction of the common path; `markGuard` holds a catch-up claim's condition on
   * the mark. Every win moves the mark forward in the same transaction.
   */
  private tryWin(
    request: ClaimRequest,
    recordLease: string,
    jobLease: PooledLease,
    now: number,
    markGuard: ICompare[],
  ): Promise<ITxnResponse> {
    const { key, fireAt, owner, leaseMs, exclusive } = request;
    const claimKey = this.keys.claim(key, fireAt);
    const compare = [absent(claimKey), ...markGuard];
    if (exclusive) compare.push(absent(this.keys.exclusive(key)));
    const leaseValue: LeaseValue = { owner, fireAt, expiresAt: now + leaseMs };
    return this.rpc.txn(
      'claim',
      compare,
      [
        putOp(claimKey, { owner, outcome: 'won' } satisfies ClaimValue, recordLease),
        putOp(this.keys.slot(request), leaseValue, jobLease.id),
        moveMarkOp(this.keys.mark(key), fireAt),
      ],
      this.reads(request),
      request.signal,
    );
  }

  /**
   * Reads of a failed claim: the claim record, the exclusive lease key, the per-fire key, the
   * mark.
   */
  private reads(request: ClaimRequest) {
    return [
      getOp(this.keys.claim(request.key, request.fireAt)),
      getOp(this.keys.exclusive(request.key)),
      getOp(this.keys.perFire(request.key, request.fireAt)),
      getOp(this.keys.mark(request.key)),
    ];
  }

  /** The record lease and a job lease for a claim, fetched together. */
  private async leasesFor(
    fireAt: number,
    leaseMs: number,
    startedAt: number,
  ): Promise<[string, PooledLease]> {
    const [record, job] = await Promise.allSettled([
      this.records.leaseFor(fireAt),
      this.pool.acquire(leaseMs, startedAt),
    ]);
    if (record.status === 'fulfilled' && job.status === 'fulfilled') {
      return [record.value, job.value];
    }
    if (job.status === 'fulfilled') this.pool.giveBack(job.value);
    throw record.status === 'rejected' ? record.reason : (job as PromiseRejectedResult).reason;
  }

  /** Answers a claim whose fire is already recorded (the reads of `res`), like `MemoryLock`. */
  private answerRecorded(request: ClaimRequest, res: ITxnResponse, now: number): ClaimResult {
    const { key, fireAt, owner } = request;
    const record = kvsOf(res, 0)[0] as IKeyValue;
    const value = parseValue<ClaimValue>(record);
    if (!value || value.owner !== owner) return { status: 'lost', key, fireAt, reason: 'claimed' };
    if (value.outcome === 'busy') return { status: 'busy', key, fireAt };
    // A re-sent claim: the same lease if it is still live (its key holds the record's token).
    const token = record.create_revision;
    const slots: [IKeyValue | undefined, boolean][] = [
      [kvsOf(res, 1)[0], true],
      [kvsOf(res, 2)[0], false],
    ];
    for (const [kv, exclusive] of slots) {
      if (!kv || kv.create_revision !== token) continue;
      const hk = heldKey(kv.key, token);
      let held = this.held.get(hk);
      if (!held) {
        held = { leaseId: kv.lease, expiresAt: parseValue<LeaseValue>(kv)?.expiresAt ?? now };
        this.held.set(hk, held);
      }
      return {
        status: 'won',
        lease: leaseOf({ ...request, exclusive }, Number(token), held.expiresAt),
      };
    }
    return { status: 'lost', key, fireAt, reason: 'claimed' };
  }

  /**
   * Answers a re-sent catch-up claim of the mark's fire whose claim record is already past its
   * window: the owner's lease of that fire, when its key (exclusive or per-fire) still exists.
   */
  private replayCatchUp(
    request: ClaimRequest,
    res: ITxnResponse,
    now: number,
  ): ClaimResult | undefined {
    const slots: [IKeyValue | undefined, boolean][] = [
      [kvsOf(res, 1)[0], true],
      [kvsOf(res, 2)[0], false],
    ];
    for (const [kv, exclusive] of slots) {
      const value = kv && parseValue<LeaseValue>(kv);
      if (!kv || value?.fireAt !== request.fireAt || value.owner !== request.owner) continue;
      const hk = heldKey(kv.key, kv.create_revision);
      let held = this.held.get(hk);
      if (!held) {
        held = { leaseId: kv.lease, expiresAt: value.expiresAt ?? now };
        this.held.set(hk, held);
      }
      const lease = leaseOf({ ...request, exclusive }, Number(kv.create_revision), held.expiresAt);
      return { status: 'won', lease };
    }
    return undefined;
  }

  /**
   * Moves a lease key to an etcd lease with a longer TTL (extend asked for more than the TTL the
   * key's lease was granted with). Resolves `false` when the key is no longer ours.
   */
  private async reattach(
    lease: Lease,
    slot: Buffer,
    held: Held,
    leaseMs: number,
    sentAt: number,
    now: number,
  ): Promise<boolean> {
    const next = await this.pool.acquire(leaseMs, sentAt);
    const value: LeaseValue = {
      owner: lease.owner,
      fireAt: lease.fireAt,
      expiresAt: now + leaseMs,
    };
    let res: ITxnResponse;
    try {
      res = await this.rpc.txn(
        'extend',
        [createdAt(slot, lease.token)],
        [putOp(slot, value, next.id)],
        [],
      );
    } catch (error) {
      // Unknown outcome: forget both leases here; the next extend re-reads which one is used.
      this.pool.forget(next.id);
      this.held.delete(heldKey(slot, lease.token));
      throw error;
    }
    if (!res.succeeded) {
      this.pool.giveBack(next);
      return false;
    }
    const previous = this.pool.owns(held.leaseId);
    if (previous) this.pool.giveBack(previous);
    else this.pool.revokeInBackground(held.leaseId);
    held.leaseId = next.id;
    return true;
  }

  /** Forgets leases whose holder neither renewed nor released them for a minute past expiry. */
  private sweepHeld(now: number): void {
    for (const [hk, held] of this.held) {
      if (held.expiresAt + 60_000 < now) this.held.delete(hk);
    }
  }

  private assertOpen(operation: string): void {
    if (this.closed) {
      throw new BackendUnavailableError(BACKEND, operation, new Error('this EtcdLock is closed'));
    }
  }
}

/** Identifies a lease this adapter knows: its slot key and token. */
function heldKey(slot: Buffer, token: string | number): string {
  return `${slot.toString('latin1')}#${token}`;
}

/** The lease object handed to the scheduler. */
function leaseOf(request: ClaimRequest, token: number, expiresAt: number): Lease {
  const { key, fireAt, owner, exclusive } = request;
  return { key, fireAt, owner, token, expiresAt, exclusive };
}

/** Whether a failed claim's reads show a key attached to `lease` (a retried, committed txn). */
function usesLease(res: ITxnResponse, lease: PooledLease): boolean {
  return [0, 1, 2].some((i) => kvsOf(res, i)[0]?.lease === lease.id);
}

const resolvedEarly = (c: LockCapabilities): number =>
  c.earlyToleranceMs ?? DEFAULT_EARLY_TOLERANCE_MS;
