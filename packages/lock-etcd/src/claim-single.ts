import {
  BackendUnavailableError,
  type ClaimRequest,
  type ClaimResult,
  LeaseTooShortError,
} from '@fleetcron/core';
import { assertClaimRequest } from '@fleetcron/core/backend';
import { EtcdLeaseInvalidError, type ICompare, type IRequestOp, type ITxnResponse } from 'etcd3';
import {
  answerRecorded,
  type ClaimContext,
  claimReads,
  replayCatchUp,
  usesLease,
} from './claim-reads.js';
import type { PooledLease } from './lease-pool.js';
import {
  absent,
  BACKEND,
  ETCD_MIN_LEASE_MS,
  kvsOf,
  markBefore,
  markOf,
  moveMarkOp,
  putOp,
} from './rpc.js';
import { type ClaimValue, type LeaseValue, leaseOf } from './values.js';

/** How often a claim is sent again when a catch-up claim's mark changes under it (rare path). */
const MAX_ATTEMPTS = 8;

/**
 * Single claims ({@link EtcdLock.claim}). One transaction: "if the fire's claim record does
 * not exist, then (exclusive claims: if the job's lease key does not exist) put the record `won`
 * and the lease key, else put the record `busy`; and move the mark; else read the record, both
 * lease keys and the mark". The fencing token is the revision of that transaction (README, "How
 * a claim works").
 */
export class SingleClaimer {
  constructor(private readonly c: ClaimContext) {}

  /**
   * `now`: the adapter's clock at the claim's arrival; `etcdNow`: the etcd host's clock then, as
   * measured (`null` without a measurement), which judges `stale` and `early` when known.
   */
  async claim(request: ClaimRequest, now: number, etcdNow: number | null): Promise<ClaimResult> {
    const { key, fireAt, leaseMs } = request;
    if (!(leaseMs >= ETCD_MIN_LEASE_MS)) {
      throw new LeaseTooShortError('leaseMs', leaseMs, ETCD_MIN_LEASE_MS, BACKEND);
    }
    assertClaimRequest(request);
    const startedAt = performance.now();
    // Catch-up claims are bounded by their `since` instead of the window (the mark guards them).
    const oldest = request.catchUp ? request.catchUp.since : (etcdNow ?? now) - this.c.windowMs;
    if (fireAt < oldest) return { status: 'lost', key, fireAt, reason: 'stale' };
    this.c.held.sweep(now);

    const claimKey = this.c.keys.claim(key, fireAt);
    if (fireAt > (etcdNow ?? now) + this.c.earlyToleranceMs) {
      // Too early by the etcd host's clock as measured (or this clock without a measurement),
      // unless the fire is already recorded (then answer as for it). README, "The fleet's clock".
      const res = await this.c.rpc.txn(
        'claim',
        [absent(claimKey)],
        [],
        claimReads(this.c.keys, request),
        request.signal,
      );
      if (res.succeeded) return { status: 'lost', key, fireAt, reason: 'early' };
      return answerRecorded(this.c.held, request, res, now);
    }

    let retriedLeases = false;
    // A catch-up claim wins only ahead of the mark: "the mark is older", or "there is no mark"
    // (etcd cannot compare a missing key's value; a failed claim's reads say which applies).
    const markKey = this.c.keys.mark(key);
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
          this.c.records.invalidate(recordLease);
          this.c.pool.forget(jobLease.id);
          continue;
        }
        // Unknown outcome: the lease may carry a won key. Revoke it; a replay answers `lost`.
        this.c.pool.discard(jobLease);
        throw error instanceof EtcdLeaseInvalidError
          ? new BackendUnavailableError(BACKEND, 'claim', error)
          : error;
      }
      if (res.succeeded) {
        if (request.exclusive && !res.responses[0]?.response_txn?.succeeded) {
          // Recorded busy in the same transaction: the job's exclusive lease key was live.
          this.c.pool.giveBack(jobLease);
          return { status: 'busy', key, fireAt };
        }
        const slot = this.c.keys.slot(request);
        const token = res.header.revision;
        const expiresAt = now + leaseMs;
        this.c.held.granted(slot, token, jobLease.id, expiresAt);
        return { status: 'won', lease: { ...leaseOf(request, Number(token), expiresAt) } };
      }
      if (!usesLease(res, jobLease.id)) this.c.pool.giveBack(jobLease);
      if (kvsOf(res, 0)[0]) return answerRecorded(this.c.held, request, res, now);
      if (request.catchUp) {
        const mark = markOf(kvsOf(res, 3)[0]);
        if (mark !== null && fireAt <= mark) {
          const replay =
            fireAt === mark ? replayCatchUp(this.c.held, request, res, now) : undefined;
          return replay ?? { status: 'lost', key, fireAt, reason: 'behind_mark' };
        }
        markGuard = [mark === null ? absent(markKey) : markBefore(markKey, fireAt)];
      }
      // No record and the condition failed: the mark changed under a catch-up claim. Again.
    }
    throw BackendUnavailableError.because(
      BACKEND,
      'claim',
      `the catch-up mark of ${JSON.stringify(key)} kept changing; gave up`,
    );
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
    const claimKey = this.c.keys.claim(key, fireAt);
    const slot = this.c.keys.slot(request);
    const leaseValue: LeaseValue = { owner, fireAt, expiresAt: now + leaseMs };
    const win = [
      putOp(claimKey, { owner, outcome: 'won' } satisfies ClaimValue, recordLease),
      putOp(slot, leaseValue, jobLease.id),
    ];
    // An exclusive claim records the fire busy when the job's lease key is live, in the same
    // transaction (atomic with "no record yet").
    const record: IRequestOp[] = exclusive
      ? [
          {
            request_txn: {
              compare: [absent(slot)],
              success: win,
              failure: [
                putOp(claimKey, { owner, outcome: 'busy' } satisfies ClaimValue, recordLease),
              ],
            },
          },
        ]
      : win;
    return this.c.rpc.txn(
      'claim',
      [absent(claimKey), ...markGuard],
      [...record, moveMarkOp(this.c.keys.mark(key), fireAt)],
      claimReads(this.c.keys, request),
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
      this.c.records.leaseFor(fireAt),
      this.c.pool.acquire(leaseMs, startedAt),
    ]);
    if (record.status === 'fulfilled' && job.status === 'fulfilled') {
      return [record.value, job.value];
    }
    if (job.status === 'fulfilled') this.c.pool.giveBack(job.value);
    throw record.status === 'rejected' ? record.reason : (job as PromiseRejectedResult).reason;
  }
}
