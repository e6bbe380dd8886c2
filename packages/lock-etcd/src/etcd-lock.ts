import {
  assertCatchUpClaim,
  BackendUnavailableError,
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
import { type Etcd3, EtcdLeaseInvalidError, type ICompare, type ITxnResponse } from 'etcd3';
import { answerRecorded, claimReads, replayCatchUp, usesLease } from './claim-reads.js';
import { clocksAtArrival, type EtcdClock, etcdClockOf } from './etcd-clock.js';
import { HeldLeases } from './held-leases.js';
import { inspectKey } from './inspect.js';
import { KeyLayout } from './keys.js';
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
  kvsOf,
  markBefore,
  markOf,
  modifiedAt,
  moveMarkOp,
  putOp,
} from './rpc.js';
import { type ClaimValue, type LeaseValue, leaseOf } from './values.js';

/** etcd's smallest lease: 2 s (TTLs are whole seconds). */
export const ETCD_MIN_LEASE_MS = 2_000;

/** How often a claim re-reads when the exclusive lease changes under it (rare path). */
const MAX_ATTEMPTS = 8;
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
  private readonly held: HeldLeases;
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
    this.held = new HeldLeases(this.rpc, this.pool, this.clock);
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
    const { now, etcdNow } = await clocksAtArrival(this.clock, this.etcdClock);
    const result = await this.claimAt(request, now, etcdNow);
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
    this.held.sweep(now);

    const claimKey = this.keys.claim(key, fireAt);
    if (fireAt > (etcdNow ?? now) + resolvedEarly(this.capabilities)) {
      // Too early by the etcd host's clock as measured (or this clock without a measurement),
      // unless the fire is already recorded (then answer as for it). README, "The fleet's clock".
      const res = await this.rpc.txn(
        'claim',
        [absent(claimKey)],
        [],
        claimReads(this.keys, request),
        request.signal,
      );
      if (res.succeeded) return { status: 'lost', key, fireAt, reason: 'early' };
      return answerRecorded(this.held, request, res, now);
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
        this.held.granted(slot, token, jobLease.id, expiresAt);
        return { status: 'won', lease: { ...leaseOf(request, Number(token), expiresAt) } };
      }
      if (!usesLease(res, jobLease.id)) this.pool.giveBack(jobLease);
      if (kvsOf(res, 0)[0]) return answerRecorded(this.held, request, res, now);
      if (request.catchUp) {
        const mark = markOf(kvsOf(res, 3)[0]);
        if (mark !== null && fireAt <= mark) {
          const replay = fireAt === mark ? replayCatchUp(this.held, request, res, now) : undefined;
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
          claimReads(this.keys, request),
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
      if (kvsOf(busy, 0)[0]) return answerRecorded(this.held, request, busy, now);
      // The exclusive lease (or the mark) changed between the two transactions: start over.
    }
    throw new BackendUnavailableError(
      BACKEND,
      'claim',
      new Error(`the exclusive lease of ${JSON.stringify(key)} kept changing; gave up`),
    );
  }

  /**
   * Renews `lease` (see {@link Lock.extend}): a keepalive of the etcd lease that carries it (see
   * `HeldLeases`); the answer carries the etcd host's clock as `backendTime` when measured.
   */
  async extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    this.assertOpen('extend');
    if (!(leaseMs >= ETCD_MIN_LEASE_MS)) {
      throw new LeaseTooShortError('leaseMs', leaseMs, ETCD_MIN_LEASE_MS, BACKEND);
    }
    const expiresAt = await this.held.renew(lease, this.keys.slot(lease), leaseMs);
    if (expiresAt === null) return null;
    const backendTime = this.etcdClock?.now() ?? null;
    const renewed = { ...lease, expiresAt };
    return backendTime === null ? renewed : { ...renewed, backendTime };
  }

  /** Ends `lease` early (see {@link Lock.release}): deletes its key if it still holds its token. */
  async release(lease: Lease): Promise<boolean> {
    this.assertOpen('release');
    return this.held.release(lease, this.keys.slot(lease));
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
    const held = this.held.get(slot, lease.token);
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
    this.held.forget(slot, lease.token);
    const inner = res.responses[1]?.response_txn;
    const leaseId = inner?.succeeded ? kvsOf(inner, 0)[0]?.lease : held?.leaseId;
    if (inner?.succeeded && leaseId) this.held.freed(leaseId, true);
    return true;
  }

  /** Reads what etcd holds for `key` (see {@link Lock.inspect}): one transaction. */
  inspect(key: string): Promise<LockInspection> {
    this.assertOpen('inspect');
    return inspectKey(this.rpc, this.keys, this.held, this.windowMs, key, () => this.clock.now());
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
      claimReads(this.keys, request),
      request.signal,
    );
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

  private assertOpen(operation: string): void {
    if (this.closed) {
      throw new BackendUnavailableError(BACKEND, operation, new Error('this EtcdLock is closed'));
    }
  }
}

const resolvedEarly = (c: LockCapabilities): number =>
  c.earlyToleranceMs ?? DEFAULT_EARLY_TOLERANCE_MS;
