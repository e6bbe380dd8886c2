import type { IKeyValue, ITxnResponse } from 'etcd3';

/**
 * Decoding of etcd's `TxnResponse` from the protobuf wire format, into the shape etcd3 gives
 * (`@grpc/proto-loader` with `longs: String, defaults: true, oneofs: true`): int64s as decimal
 * strings (exact at any size), keys and values as Buffers, the fields this adapter reads always
 * present. See `txn-encode.ts` for why the adapter has its own codec.
 */

/** Wire types. */
const VARINT = 0;
const BYTES = 2;
const EMPTY = Buffer.alloc(0);

/** Reads protobuf fields from one message's bytes. */
class Reader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** A varint as a number (exact below 2^53), or as a decimal string when larger. */
  varint(): number {
    const buf = this.buf;
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const byte = buf[this.pos++] as number;
      if (this.pos > this.end) throw new RangeError('txn codec: truncated varint');
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 128;
    }
    throw new RangeError('txn codec: varint too long');
  }

  /** An int64 (`unsigned`: a uint64) as etcd3 gives it: a decimal string, exact at any size. */
  int64(unsigned = false): string {
    const start = this.pos;
    const n = this.varint();
    if (Number.isSafeInteger(n) && n <= 2 ** 53 - 1 && this.pos - start <= 7) return String(n);
    let v = 0n;
    let shift = 0n;
    for (let i = start; i < this.pos; i++) {
      v |= BigInt((this.buf[i] as number) & 0x7f) << shift;
      shift += 7n;
    }
    return (unsigned ? BigInt.asUintN(64, v) : BigInt.asIntN(64, v)).toString();
  }

  /** The bounds of a length-delimited field's payload; moves past it. */
  span(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    this.pos += length;
    if (this.pos > this.end) throw new RangeError('txn codec: truncated field');
    return [start, this.pos];
  }

  bytes(): Buffer {
    const [start, end] = this.span();
    return Buffer.from(this.buf.subarray(start, end));
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint();
    else if (wire === BYTES) this.span();
    else if (wire === 1) this.pos += 8;
    else if (wire === 5) this.pos += 4;
    else throw new RangeError(`txn codec: unsupported wire type ${wire}`);
  }
}

interface Header {
  cluster_id: string;
  member_id: string;
  revision: string;
  raft_term: string;
}

/** Decodes a `TxnResponse` (shaped as etcd3's answer; nested responses the same way). */
export function decodeTxnResponse(buf: Buffer): ITxnResponse {
  return readTxn(new Reader(buf, 0, buf.length)) as unknown as ITxnResponse;
}

function readTxn(r: Reader): { header: Header | null; succeeded: boolean; responses: unknown[] } {
  let header: Header | null = null;
  let succeeded = false;
  const responses: unknown[] = [];
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === BYTES) header = readHeader(sub(r));
    else if (field === 2 && (tag & 7) === VARINT) succeeded = r.varint() !== 0;
    else if (field === 3 && (tag & 7) === BYTES) responses.push(readResponseOp(sub(r)));
    else r.skip(tag & 7);
  }
  return { header, succeeded, responses };
}

/** A reader over the payload of the length-delimited field at `r`'s position. */
function sub(r: Reader): Reader {
  const [start, end] = r.span();
  return new Reader(r.buf, start, end);
}

function readHeader(r: Reader): Header {
  const h: Header = { cluster_id: '0', member_id: '0', revision: '0', raft_term: '0' };
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    if ((tag & 7) !== VARINT) r.skip(tag & 7);
    else if (field === 1) h.cluster_id = r.int64(true);
    else if (field === 2) h.member_id = r.int64(true);
    else if (field === 3) h.revision = r.int64();
    else if (field === 4) h.raft_term = r.int64(true);
    else r.skip(VARINT);
  }
  return h;
}

function readResponseOp(r: Reader): Record<string, unknown> {
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    if ((tag & 7) !== BYTES) {
      r.skip(tag & 7);
      continue;
    }
    if (field === 1) return { response: 'response_range', response_range: readRange(sub(r)) };
    if (field === 2) return { response: 'response_put', response_put: readPut(sub(r)) };
    if (field === 3) {
      return { response: 'response_delete_range', response_delete_range: readDelete(sub(r)) };
    }
    if (field === 4) return { response: 'response_txn', response_txn: readTxn(sub(r)) };
    r.skip(BYTES);
  }
  return { response: undefined };
}

function readRange(r: Reader) {
  const out = { header: null as Header | null, kvs: [] as IKeyValue[], more: false, count: '0' };
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === BYTES) out.header = readHeader(sub(r));
    else if (field === 2 && (tag & 7) === BYTES) out.kvs.push(readKeyValue(sub(r)));
    else if (field === 3 && (tag & 7) === VARINT) out.more = r.varint() !== 0;
    else if (field === 4 && (tag & 7) === VARINT) out.count = r.int64();
    else r.skip(tag & 7);
  }
  return out;
}

function readPut(r: Reader) {
  const out = { header: null as Header | null, prev_kv: null as IKeyValue | null };
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === BYTES) out.header = readHeader(sub(r));
    else if (field === 2 && (tag & 7) === BYTES) out.prev_kv = readKeyValue(sub(r));
    else r.skip(tag & 7);
  }
  return out;
}

function readDelete(r: Reader) {
  const out = { header: null as Header | null, deleted: '0', prev_kvs: [] as IKeyValue[] };
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === BYTES) out.header = readHeader(sub(r));
    else if (field === 2 && (tag & 7) === VARINT) out.deleted = r.int64();
    else if (field === 3 && (tag & 7) === BYTES) out.prev_kvs.push(readKeyValue(sub(r)));
    else r.skip(tag & 7);
  }
  return out;
}

function readKeyValue(r: Reader): IKeyValue {
  const kv: { key: Buffer; value: Buffer; [int64: string]: Buffer | string } = {
    key: EMPTY,
    create_revision: '0',
    mod_revision: '0',
    version: '0',
    value: EMPTY,
    lease: '0',
  };
  while (r.pos < r.end) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === 1 && wire === BYTES) kv.key = r.bytes();
    else if (field === 2 && wire === VARINT) kv.create_revision = r.int64();
    else if (field === 3 && wire === VARINT) kv.mod_revision = r.int64();
    else if (field === 4 && wire === VARINT) kv.version = r.int64();
    else if (field === 5 && wire === BYTES) kv.value = r.bytes();
    else if (field === 6 && wire === VARINT) kv.lease = r.int64();
    else r.skip(wire);
  }
  return kv as unknown as IKeyValue;
}
