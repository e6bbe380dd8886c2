import {
  BackendUnavailableError,
  type ClaimRequest,
  type ClaimResult,
  LeaseTooShortError,
} from '@fleetcron/core';
import { assertClaimRequest } from '@fleetcron/core/backend';
import { EtcdLeaseInvalidError, type ICompare, type ITxnResponse } from 'etcd3';
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
  modifiedAt,
  moveMarkOp,
  putOp,
} from './rpc.js';
import { type ClaimValue, type LeaseValue, leaseOf } from './values.js';

/** How often a claim re-reads when the exclusive lease changes under it (rare path). */
const MAX_ATTEMPTS = 8;

/**
 * Single claims ({@link EtcdLock.claim}). The common path is one transaction: "if the fire's
 * claim record does not exist (and, for an exclusive claim, the job's lease key does not exist)
 * then put both and move the mark, else read the record, both lease keys and the mark". The
 * fencing token is the revision of that transaction. A fire whose job's exclusive lease is live
 * takes a second transaction that records it `busy` (README, "How a claim works").
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
        busy = await this.c.rpc.txn(
          'claim',
          [
            absent(claimKey),
            modifiedAt(this.c.keys.exclusive(key), live.mod_revision),
            ...markGuard,
          ],
          [
            putOp(
              claimKey,
              { owner: request.owner, outcome: 'busy' } satisfies ClaimValue,
              recordLease,
            ),
            moveMarkOp(markKey, fireAt),
          ],
          claimReads(this.c.keys, request),
          request.signal,
        );
      } catch (error) {
        if (!(error instanceof EtcdLeaseInvalidError) || retriedLeases) {
          throw error instanceof EtcdLeaseInvalidError
            ? new BackendUnavailableError(BACKEND, 'claim', error)
            : error;
        }
        retriedLeases = true;
        this.c.records.invalidate(recordLease);
        continue;
      }
      if (busy.succeeded) return { status: 'busy', key, fireAt };
      if (kvsOf(busy, 0)[0]) return answerRecorded(this.c.held, request, busy, now);
      // The exclusive lease (or the mark) changed between the two transactions: start over.
    }
    throw new BackendUnavailableError(
      BACKEND,
      'claim',
      new Error(`the exclusive lease of ${JSON.stringify(key)} kept changing; gave up`),
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
    const compare = [absent(claimKey), ...markGuard];
    if (exclusive) compare.push(absent(this.c.keys.exclusive(key)));
    const leaseValue: LeaseValue = { owner, fireAt, expiresAt: now + leaseMs };
    return this.c.rpc.txn(
      'claim',
      compare,
      [
        putOp(claimKey, { owner, outcome: 'won' } satisfies ClaimValue, recordLease),
        putOp(this.c.keys.slot(request), leaseValue, jobLease.id),
        moveMarkOp(this.c.keys.mark(key), fireAt),
      ],
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
