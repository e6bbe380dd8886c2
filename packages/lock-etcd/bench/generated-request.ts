import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ICompare } from 'etcd3';
import { type Chunk, type Item, valuesOf } from '../src/batch-request.js';
import type { ClaimContext } from '../src/claim-reads.js';
import { markValues } from '../src/rpc.js';
import type { LeaseValue } from '../src/values.js';
import {
  Compare_CompareResult,
  Compare_CompareTarget,
  type CompareSchema,
  type RequestOpSchema,
} from './generated/rpc_pb.js';

/** A `RequestOp` as protobuf-es takes it before `create`. */
type RequestOpInit = MessageInitShape<typeof RequestOpSchema>;
type CompareInit = MessageInitShape<typeof CompareSchema>;

/**
 * The nested transaction of one request of a batch, exactly as `requestOp` (src/batch-request.ts)
 * builds it, but as a message of the generated codec (`bench/generated/`, protobuf-es): the same
 * operations, keys, values and leases, field for field, so that both encode to the same bytes
 * (`test/generated-codec.test.ts` checks it). `chunkLeases`: the chunk's lease ids as int64s
 * (bigint), converted once per chunk, as a codec with bigint int64s would keep them.
 */
export function requestMessage(
  c: ClaimContext,
  item: Item,
  chunk: Chunk,
  position: number,
  now: number,
  chunkLeases: ChunkLeases,
): RequestOpInit {
  const { keys } = c;
  const { request, markGuard } = item;
  const { key, fireAt, owner, leaseMs, exclusive } = request;
  const claimKey = keys.claim(key, fireAt);
  const failure: RequestOpInit[] = request.catchUp
    ? [
        getOp(claimKey),
        getOp(keys.exclusive(key)),
        getOp(keys.perFire(key, fireAt)),
        getOp(keys.mark(key)),
      ]
    : [getOp(claimKey)];
  if (item.early) return txnOp([absent(claimKey)], [], failure);
  const recordLease = chunkLeases.records[position] ?? 0n;
  const jobLease = chunkLeases.jobs.get(c.pool.ttlFor(leaseMs)) ?? 0n;
  const shared = chunk.items.length > 1 ? { shared: true as const } : {};
  const leaseValue: LeaseValue = { owner, fireAt, expiresAt: now + leaseMs, ...shared };
  const slot = exclusive ? keys.exclusive(key) : keys.perFire(key, fireAt);
  const record = valuesOf(owner);
  const win = [
    putOp(claimKey, record.won, recordLease),
    putOp(slot, Buffer.from(JSON.stringify(leaseValue)), jobLease),
  ];
  const mark = moveMarkOp(keys.mark(key), fireAt);
  const success: RequestOpInit[] = exclusive
    ? [txnOp([absent(slot)], win, [putOp(claimKey, record.busy, recordLease)]), mark]
    : [...win, mark];
  return txnOp([absent(claimKey), ...markGuard.map(compareOf)], success, failure);
}

/** A chunk's etcd lease ids as bigints: record leases by position, job leases by TTL. */
export interface ChunkLeases {
  records: bigint[];
  jobs: Map<number, bigint>;
}

/** {@link ChunkLeases} of `chunk` (its ids are decimal strings). */
export function chunkLeasesOf(chunk: Chunk): ChunkLeases {
  const jobs = new Map<number, bigint>();
  for (const [ttl, lease] of chunk.jobLeases) jobs.set(ttl, BigInt(lease.id));
  return { records: chunk.recordLeases.map((id) => (id ? BigInt(id) : 0n)), jobs };
}

function txnOp(
  compare: CompareInit[],
  success: RequestOpInit[],
  failure: RequestOpInit[],
): RequestOpInit {
  return { request: { case: 'requestTxn', value: { compare, success, failure } } };
}

function getOp(key: Buffer): RequestOpInit {
  return { request: { case: 'requestRange', value: { key } } };
}

function putOp(key: Buffer, value: Buffer, lease: bigint): RequestOpInit {
  return { request: { case: 'requestPut', value: { key, value, lease } } };
}

function absent(key: Buffer): CompareInit {
  return {
    key,
    target: Compare_CompareTarget.Create,
    result: Compare_CompareResult.Equal,
    targetUnion: { case: 'createRevision', value: 0n },
  };
}

/** A catch-up mark guard (`markBefore` or `absent`, etcd3-shaped) as a generated `Compare`. */
function compareOf(c: ICompare): CompareInit {
  if (c.target === 'Create') return absent(c.key as Buffer);
  return {
    key: c.key as Buffer,
    target: Compare_CompareTarget.Value,
    result: Compare_CompareResult.Less,
    targetUnion: { case: 'value', value: c.value as Buffer },
  };
}

/** `moveMarkOp` for a whole-millisecond fire time (the only kind a batch bench sends). */
function moveMarkOp(markKey: Buffer, fireAt: number): RequestOpInit {
  const [value, before] = markValues(fireAt);
  const put: RequestOpInit = { request: { case: 'requestPut', value: { key: markKey, value } } };
  const atOrPast: CompareInit = {
    key: markKey,
    target: Compare_CompareTarget.Value,
    result: Compare_CompareResult.Greater,
    targetUnion: { case: 'value', value: before },
  };
  return txnOp([atOrPast], [], [put]);
}
