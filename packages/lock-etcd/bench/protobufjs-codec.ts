import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { type Chunk, type Item, valuesOf } from '../src/batch-request.js';
import type { ClaimContext } from '../src/claim-reads.js';
import { markValues } from '../src/rpc.js';
import type { LeaseValue } from '../src/values.js';

/**
 * The third codec of the bench: protobufjs (already under etcd3, through `@grpc/proto-loader`)
 * on the same `bench/proto/rpc.proto`, field names kept as in the file. Its `encode`/`decode`
 * are the functions protobufjs generates from the schema on first use, the same code
 * `pbjs -t static-module` writes to a file; what is measured is that code alone, without
 * proto-loader's `fromObject`/`toObject` conversions (the cost the hand codec was written to
 * avoid). Int64s: `Long` (converted once per chunk, as for the bigints of protobuf-es).
 */
const root = new protobuf.Root().loadSync(
  fileURLToPath(new URL('./proto/rpc.proto', import.meta.url)),
  { keepCase: true },
);
const TxnRequest = root.lookupType('etcdserverpb.TxnRequest');
const TxnResponse = root.lookupType('etcdserverpb.TxnResponse');
/** protobufjs's `long` (its dependency); int64s decode to it. */
const Long = protobuf.util.Long as unknown as { fromString(text: string): Int64 };
if (!Long) throw new Error('protobufjs found no `long`: its int64s would not be exact');

/** Compare enums as numbers (protobufjs encodes enum fields as given: no string names). */
const CREATE = 1;
const VALUE = 3;
const GREATER = 1;
const LESS = 2;

type Op = Record<string, unknown>;
type Int64 = protobuf.Long;

/** Encodes a `TxnRequest` object (etcd's field names, enum numbers, `Long` int64s). */
export function encodeProtobufjs(success: Op[]): Uint8Array {
  return TxnRequest.encode({ compare: [], success, failure: [] }).finish();
}

/** Decodes a `TxnResponse` into protobufjs messages (int64s as `Long`, bytes as Buffers). */
export function decodeProtobufjs(bytes: Uint8Array): protobuf.Message {
  return TxnResponse.decode(bytes);
}

/** The response's plain form (for the bench's test): int64s as strings, defaults shown. */
export function protobufjsObject(message: protobuf.Message): Record<string, unknown> {
  return TxnResponse.toObject(message, { longs: String, defaults: true, oneofs: false });
}

/** A chunk's lease ids as `Long`s: record leases by position, job leases by TTL. */
export function chunkLongsOf(chunk: Chunk): { records: Int64[]; jobs: Map<number, Int64> } {
  const jobs = new Map<number, Int64>();
  for (const [ttl, lease] of chunk.jobLeases) jobs.set(ttl, Long.fromString(lease.id));
  return {
    records: chunk.recordLeases.map((id) => Long.fromString(id || '0')),
    jobs,
  };
}

/** `requestOp` (src/batch-request.ts) as a protobufjs object: the same operations, field for field. */
export function requestObject(
  c: ClaimContext,
  item: Item,
  chunk: Chunk,
  position: number,
  now: number,
  leases: ReturnType<typeof chunkLongsOf>,
): Op {
  const { keys } = c;
  const { request, markGuard } = item;
  const { key, fireAt, owner, leaseMs, exclusive } = request;
  const claimKey = keys.claim(key, fireAt);
  const failure = request.catchUp
    ? [
        getOp(claimKey),
        getOp(keys.exclusive(key)),
        getOp(keys.perFire(key, fireAt)),
        getOp(keys.mark(key)),
      ]
    : [getOp(claimKey)];
  if (item.early) return txnOp([absent(claimKey)], [], failure);
  const recordLease = leases.records[position] as Int64;
  const jobLease = leases.jobs.get(c.pool.ttlFor(leaseMs)) as Int64;
  const shared = chunk.items.length > 1 ? { shared: true as const } : {};
  const leaseValue: LeaseValue = { owner, fireAt, expiresAt: now + leaseMs, ...shared };
  const slot = exclusive ? keys.exclusive(key) : keys.perFire(key, fireAt);
  const record = valuesOf(owner);
  const win = [
    putOp(claimKey, record.won, recordLease),
    putOp(slot, Buffer.from(JSON.stringify(leaseValue)), jobLease),
  ];
  const mark = moveMarkOp(keys.mark(key), fireAt);
  const success = exclusive
    ? [txnOp([absent(slot)], win, [putOp(claimKey, record.busy, recordLease)]), mark]
    : [...win, mark];
  const guards = markGuard.map((g) =>
    g.target === 'Create'
      ? absent(g.key as Buffer)
      : { key: g.key, target: VALUE, result: LESS, value: g.value },
  );
  return txnOp([absent(claimKey), ...guards], success, failure);
}

function txnOp(compare: Op[], success: Op[], failure: Op[]): Op {
  return { request_txn: { compare, success, failure } };
}

function getOp(key: Buffer): Op {
  return { request_range: { key } };
}

function putOp(key: Buffer, value: Buffer, lease?: Int64): Op {
  return { request_put: lease ? { key, value, lease } : { key, value } };
}

/** `result` left out: protobufjs writes every field given, a default too (`Equal` is 0). */
function absent(key: Buffer): Op {
  return { key, target: CREATE, create_revision: 0 };
}

function moveMarkOp(markKey: Buffer, fireAt: number): Op {
  const [value, before] = markValues(fireAt);
  const atOrPast = { key: markKey, target: VALUE, result: GREATER, value: before };
  return txnOp([atOrPast], [], [putOp(markKey, value)]);
}

/**
 * protobufjs as a drop-in under the adapter's interface (`encodeTxnRequest` /
 * `decodeTxnResponse` of src/txn-encode.ts and src/txn-decode.ts): the `ITxnRequest` the
 * adapter builds (etcd3's shape: enum names, int64s as strings, Buffers) through the library's
 * own `fromObject`, and the answer back to etcd3's `ITxnResponse` shape through its `toObject`
 * with `@grpc/proto-loader`'s options (`longs: String, defaults: true, oneofs: true`), so that
 * no caller changes. What replacing the hand codec with the library would cost.
 */
export function encodeDropIn(txn: unknown): Uint8Array {
  return TxnRequest.encode(TxnRequest.fromObject(txn as Record<string, unknown>)).finish();
}

/** The answer as etcd3's `ITxnResponse` (see {@link encodeDropIn}). */
export function decodeDropIn(bytes: Uint8Array): Record<string, unknown> {
  return TxnResponse.toObject(TxnResponse.decode(bytes), {
    longs: String,
    defaults: true,
    oneofs: true,
  });
}

/**
 * Whether two encoded `TxnRequest`s carry the same request (field for field, defaults shown: an
 * encoder may write a default value that another leaves out).
 */
export function sameTxnRequest(a: Uint8Array, b: Uint8Array): boolean {
  const plain = (bytes: Uint8Array) =>
    JSON.stringify(
      TxnRequest.toObject(TxnRequest.decode(bytes), { longs: String, defaults: true }),
    );
  return plain(a) === plain(b);
}
