import type { ClaimRequest, ClaimResult } from '@fleetcron/core';
import type { IKeyValue, IRequestOp, ITxnResponse } from 'etcd3';
import type { HeldLeases } from './held-leases.js';
import type { KeyLayout } from './keys.js';
import type { JobLeasePool } from './lease-pool.js';
import type { RecordLeases } from './record-leases.js';
import { type EtcdRpc, getOp, kvsOf, parseValue } from './rpc.js';

/** What claims (single and batched) work with: the lock's parts and settings. */
export interface ClaimContext {
  rpc: EtcdRpc;
  keys: KeyLayout;
  held: HeldLeases;
  pool: JobLeasePool;
  records: RecordLeases;
  windowMs: number;
  earlyToleranceMs: number;
  /** etcd's `--max-txn-ops`: operations per level of one transaction. */
  maxTxnOps: number;
}

import { type ClaimValue, type LeaseValue, leaseOf } from './values.js';

/**
 * The reads a claim transaction makes when its condition fails, in this order: the claim record
 * (0), the exclusive lease key (1), the per-fire lease key (2), the mark (3). The answers below
 * read a transaction response (or a nested one) by these indexes.
 */
export function claimReads(keys: KeyLayout, request: ClaimRequest): IRequestOp[] {
  return [
    getOp(keys.claim(request.key, request.fireAt)),
    getOp(keys.exclusive(request.key)),
    getOp(keys.perFire(request.key, request.fireAt)),
    getOp(keys.mark(request.key)),
  ];
}

/** Answers a claim whose fire is already recorded (the reads of `res`), like `MemoryLock`. */
export function answerRecorded(
  held: HeldLeases,
  request: ClaimRequest,
  res: ITxnResponse,
  now: number,
): ClaimResult {
  const { key, fireAt, owner } = request;
  const record = kvsOf(res, 0)[0] as IKeyValue;
  const value = parseValue<ClaimValue>(record);
  if (!value || value.owner !== owner) return { status: 'lost', key, fireAt, reason: 'claimed' };
  if (value.outcome === 'busy') return { status: 'busy', key, fireAt };
  // A re-sent claim: the same lease if it is still live (its key holds the record's token).
  const token = record.create_revision;
  for (const [kv, exclusive] of leaseKeysOf(res)) {
    if (!kv || kv.create_revision !== token) continue;
    const { expiresAt } = held.ofKey(kv, now);
    return { status: 'won', lease: leaseOf({ ...request, exclusive }, Number(token), expiresAt) };
  }
  return { status: 'lost', key, fireAt, reason: 'claimed' };
}

/**
 * Answers a re-sent catch-up claim of the mark's fire whose claim record is already past its
 * window: the owner's lease of that fire, when its key (exclusive or per-fire) still exists.
 */
export function replayCatchUp(
  held: HeldLeases,
  request: ClaimRequest,
  res: ITxnResponse,
  now: number,
): ClaimResult | undefined {
  for (const [kv, exclusive] of leaseKeysOf(res)) {
    const value = kv && parseValue<LeaseValue>(kv);
    if (!kv || value?.fireAt !== request.fireAt || value.owner !== request.owner) continue;
    const { expiresAt } = held.ofKey(kv, now);
    const lease = leaseOf({ ...request, exclusive }, Number(kv.create_revision), expiresAt);
    return { status: 'won', lease };
  }
  return undefined;
}

/** Whether a failed claim's reads show a key attached to etcd lease `leaseId` (a retried, committed txn). */
export function usesLease(res: ITxnResponse, leaseId: string): boolean {
  return [0, 1, 2].some((i) => kvsOf(res, i)[0]?.lease === leaseId);
}

/** The exclusive and per-fire lease keys among a failed claim's reads. */
function leaseKeysOf(res: ITxnResponse): [IKeyValue | undefined, boolean][] {
  return [
    [kvsOf(res, 1)[0], true],
    [kvsOf(res, 2)[0], false],
  ];
}
