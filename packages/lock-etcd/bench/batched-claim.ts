import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { ClaimRequest } from '@fleetcron/core';
import type { Etcd3 } from 'etcd3';
import { type Chunk, type Item, requestOp } from '../src/batch-request.js';
import type { ClaimContext } from '../src/claim-reads.js';
import { KeyLayout } from '../src/keys.js';
import type { PooledLease } from '../src/lease-pool.js';
import { rawTxnCallOf } from '../src/raw-txn.js';
import { markBefore } from '../src/rpc.js';
import { decodeTxnResponse } from '../src/txn-decode.js';
import { encodeTxnRequest } from '../src/txn-encode.js';
import { TxnRequestSchema, TxnResponseSchema } from './generated/rpc_pb.js';
import { chunkLeasesOf, requestMessage } from './generated-request.js';
import {
  chunkLongsOf,
  decodeDropIn,
  decodeProtobufjs,
  encodeDropIn,
  encodeProtobufjs,
  requestObject,
} from './protobufjs-codec.js';

/**
 * One batched claim's transaction as `BatchClaimer` sends it (src/claim-batch.ts): `count`
 * requests of one fire time, each a nested transaction built by `requestOp`, on one record lease
 * and one job lease. The default is the adapter's full `Txn`: 124 requests (`maxTxnOps` 128 less
 * the 4 levels a request takes), every one an exclusive claim due now, as the scheduler sends them.
 */
export interface BatchedClaim {
  c: ClaimContext;
  chunk: Chunk;
  now: number;
}

/** The shape of one request of a {@link BatchedClaim}. */
export type RequestShape = 'exclusive' | 'per-fire' | 'early' | 'catch-up';

/** Settings of {@link batchedClaim}. */
export interface BatchedClaimSettings {
  prefix: string;
  owner: string;
  fireAt: number;
  recordLease: string;
  jobLease: string;
  /** One entry per request (default: 124 × `exclusive`). */
  shapes?: RequestShape[];
}

/** The job-lease TTL of the batch (the pool's `ttlFor(30 s)` with spares: 30 + 1 s). */
const TTL_SEC = 31;
const LEASE_MS = 30_000;

/** A {@link BatchedClaim} of `settings`; the same settings give the same keys. */
export function batchedClaim(settings: BatchedClaimSettings): BatchedClaim {
  const { prefix, owner, fireAt, recordLease, jobLease } = settings;
  const shapes = settings.shapes ?? Array.from({ length: 124 }, () => 'exclusive' as const);
  const keys = new KeyLayout(prefix);
  // requestOp reads the key layout and the pool's TTL rounding of the context, nothing else.
  const c = { keys, pool: { ttlFor: () => TTL_SEC }, maxTxnOps: 128 } as unknown as ClaimContext;
  const items: Item[] = shapes.map((shape, index) => {
    const key = `scale-1700000000-12-job-${index}`;
    const request: ClaimRequest = {
      key,
      fireAt: shape === 'early' ? fireAt + 60_000 : fireAt,
      owner,
      leaseMs: LEASE_MS,
      exclusive: shape !== 'per-fire',
      ...(shape === 'catch-up' ? { catchUp: { since: fireAt - 3_600_000 } } : {}),
    };
    const markGuard = shape === 'catch-up' ? [markBefore(keys.mark(key), fireAt)] : [];
    return { index, request, early: shape === 'early', markGuard, attempts: 0 };
  });
  const lease = { id: jobLease } as PooledLease;
  const chunk: Chunk = {
    items,
    jobLeases: new Map([[TTL_SEC, lease]]),
    recordLeases: items.map((item) => (item.early ? '' : recordLease)),
  };
  return { c, chunk, now: fireAt };
}

/** The hand codec (src/txn-encode.ts): builds the batch's `TxnRequest` as the adapter does, encodes it. */
export function encodeByHand({ c, chunk, now }: BatchedClaim): Buffer {
  const success = chunk.items.map((item, j) => requestOp(c, item, chunk, j, now));
  return encodeTxnRequest({ compare: [], success, failure: [] });
}

/** The generated codec (bench/generated/, protobuf-es): builds the same `TxnRequest`, encodes it. */
export function encodeGenerated({ c, chunk, now }: BatchedClaim): Uint8Array {
  const leases = chunkLeasesOf(chunk);
  const success = chunk.items.map((item, j) => requestMessage(c, item, chunk, j, now, leases));
  return toBinary(TxnRequestSchema, create(TxnRequestSchema, { success }));
}

/** The hand codec's decoding of a `TxnResponse` (src/txn-decode.ts). */
export const decodeByHand = decodeTxnResponse;

/** The generated codec's decoding of a `TxnResponse`. */
export function decodeGenerated(bytes: Uint8Array) {
  return fromBinary(TxnResponseSchema, bytes);
}

/**
 * Sends an encoded `TxnRequest` to etcd through `client`'s connection, as the adapter does
 * (src/raw-txn.ts), and resolves the answer's bytes as etcd sent them.
 */
export async function sendForBytes(client: Etcd3, request: Uint8Array): Promise<Buffer> {
  const call = rawTxnCallOf(client);
  if (!call) throw new Error('this etcd3 client has no connection pool to send raw bytes on');
  return call(Buffer.from(request), (bytes) => bytes, new Date(Date.now() + 10_000));
}

/** protobufjs (bench/protobufjs-codec.ts): builds the same `TxnRequest`, encodes it. */
export function encodeWithProtobufjs({ c, chunk, now }: BatchedClaim): Uint8Array {
  const leases = chunkLongsOf(chunk);
  return encodeProtobufjs(
    chunk.items.map((item, j) => requestObject(c, item, chunk, j, now, leases)),
  );
}

/** protobufjs's decoding of a `TxnResponse`. */
export const decodeWithProtobufjs = decodeProtobufjs;

/**
 * protobufjs as a drop-in under the adapter's interface: the adapter's own `TxnRequest` (as
 * {@link encodeByHand} builds it) through `fromObject`, encoded.
 */
export function encodeWithProtobufjsDropIn({ c, chunk, now }: BatchedClaim): Uint8Array {
  const success = chunk.items.map((item, j) => requestOp(c, item, chunk, j, now));
  return encodeDropIn({ compare: [], success, failure: [] });
}

/** protobufjs's decoding as a drop-in: to etcd3's `ITxnResponse` shape through `toObject`. */
export const decodeWithProtobufjsDropIn = decodeDropIn;
