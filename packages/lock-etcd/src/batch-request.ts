import type { ClaimRequest } from '@fleetcron/core';
import type { ICompare, IKeyValue, IRequestOp, IResponseOp, ITxnResponse } from 'etcd3';
import { type ClaimContext, claimReads } from './claim-reads.js';
import type { KeyLayout } from './keys.js';
import type { PooledLease } from './lease-pool.js';
import { absent, getOp, moveMarkOp, parseValue, putOp } from './rpc.js';
import type { ClaimValue, LeaseValue } from './values.js';

/** One request of a batch on its way. */
export interface Item {
  index: number;
  request: ClaimRequest;
  /** Ahead of the etcd clock: only read whether the fire is recorded. */
  early: boolean;
  /** A catch-up claim's condition on the mark ("older than the fire", or "absent"). */
  markGuard: ICompare[];
  attempts: number;
}

/** Requests sent in one transaction, with the etcd leases their claims use. */
export interface Chunk {
  items: Item[];
  /** The job lease of each TTL (seconds): every key the chunk wins with that TTL goes on it. */
  jobLeases: Map<number, PooledLease>;
  /** The record lease of each item (by position), `''` for early items. */
  recordLeases: string[];
}

/**
 * The nested transaction of one request of a batch (README, "Batched claims"):
 *
 * ```text
 * TXN IF create_revision(c/…) == 0 [AND the catch-up mark guard]
 *     THEN TXN IF create_revision(x/{job}) == 0             -- exclusive claims
 *              THEN put c/… {owner, won}; put x/{job} {…}   -- won
 *              ELSE put c/… {owner, busy}                   -- busy, atomic with the condition
 *          move the mark
 *     ELSE get c/…                       (a catch-up claim: get c/…, x/{job}, f/…, m/{job})
 * ```
 *
 * A non-exclusive claim puts `c/…` and `f/…` directly. A request whose record exists writes
 * nothing and reads only the record: a loser's answer (`claimed`, or this owner's `busy`) is in
 * it; a re-sent claim of a fire this owner won reads its lease keys next (`leaseKeyReads`).
 */
export function requestOp(
  c: ClaimContext,
  item: Item,
  chunk: Chunk,
  position: number,
  now: number,
): IRequestOp {
  const { keys } = c;
  const { request, markGuard } = item;
  const { key, fireAt, owner, leaseMs, exclusive } = request;
  const claimKey = keys.claim(key, fireAt);
  const failure = request.catchUp ? claimReads(keys, request) : [getOp(claimKey)];
  if (item.early) return { request_txn: { compare: [absent(claimKey)], success: [], failure } };
  const recordLease = chunk.recordLeases[position] ?? '0';
  const jobLease = chunk.jobLeases.get(c.pool.ttlFor(leaseMs))?.id ?? '0';
  // Several requests may win on one etcd lease: marked so that a renewal moves the key first.
  const shared = chunk.items.length > 1 ? { shared: true as const } : {};
  const leaseValue: LeaseValue = { owner, fireAt, expiresAt: now + leaseMs, ...shared };
  const slot = exclusive ? keys.exclusive(key) : keys.perFire(key, fireAt);
  const record = valuesOf(owner);
  const win = [putBytes(claimKey, record.won, recordLease), putOp(slot, leaseValue, jobLease)];
  const mark = moveMarkOp(keys.mark(key), fireAt);
  const success: IRequestOp[] = exclusive
    ? [
        {
          request_txn: {
            compare: [absent(slot)],
            success: win,
            failure: [putBytes(claimKey, record.busy, recordLease)],
          },
        },
        mark,
      ]
    : [...win, mark];
  return { request_txn: { compare: [absent(claimKey), ...markGuard], success, failure } };
}

/** Whether claim record `record` is a win of `owner` (then a re-sent claim gets its lease). */
export function isOwnWin(record: IKeyValue, owner: string): boolean {
  const value = parseValue<ClaimValue>(record);
  return value?.owner === owner && value.outcome === 'won';
}

/** The reads of the lease keys of a claim, exclusive then per-fire (`claimReads` 1 and 2). */
export function leaseKeyReads(keys: KeyLayout, request: ClaimRequest): IRequestOp[] {
  return [getOp(keys.exclusive(request.key)), getOp(keys.perFire(request.key, request.fireAt))];
}

/**
 * A failed request's reads (`get c/…` only, unless a catch-up claim) as `claimReads` orders
 * them: the claim record, then empty lease-key reads.
 */
export function readsOf(r: ITxnResponse): ITxnResponse {
  return readsView(kvsOf0(r.responses[0]), undefined, undefined);
}

/** A response holding the claim record and the two lease keys read, in `claimReads` order. */
export function readsView(
  record: IKeyValue | undefined,
  exclusive: IResponseOp | undefined,
  perFire: IResponseOp | undefined,
): ITxnResponse {
  const none = { response_range: { kvs: [] } };
  return {
    responses: [
      { response_range: { kvs: record ? [record] : [] } },
      exclusive ?? none,
      perFire ?? none,
    ],
  } as unknown as ITxnResponse;
}

function kvsOf0(op: IResponseOp | undefined): IKeyValue | undefined {
  return op?.response_range?.kvs[0];
}

/** The record values (`won`, `busy`) of `owner`, encoded as {@link putOp} would: once per owner. */
const recordValues = new Map<string, { won: Buffer; busy: Buffer }>();
export function valuesOf(owner: string): { won: Buffer; busy: Buffer } {
  let values = recordValues.get(owner);
  if (!values) {
    const encode = (value: ClaimValue) => Buffer.from(JSON.stringify(value));
    values = { won: encode({ owner, outcome: 'won' }), busy: encode({ owner, outcome: 'busy' }) };
    if (recordValues.size < 64) recordValues.set(owner, values);
  }
  return values;
}

/** A put of already encoded bytes. */
function putBytes(key: Buffer, value: Buffer, lease: string): IRequestOp {
  return { request_put: { key, value, lease } };
}
