import { toJson } from '@bufbuild/protobuf';
import { startEtcd } from '@fleetcron/testkit';
import type { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  batchedClaim,
  decodeByHand,
  decodeGenerated,
  decodeWithProtobufjs,
  decodeWithProtobufjsDropIn,
  encodeByHand,
  encodeGenerated,
  encodeWithProtobufjs,
  encodeWithProtobufjsDropIn,
  type RequestShape,
  sendForBytes,
} from '../bench/batched-claim.js';
import { TxnResponseSchema } from '../bench/generated/rpc_pb.js';
import { protobufjsObject, sameTxnRequest } from '../bench/protobufjs-codec.js';
import { clientOf, lazy } from './fixture.js';

// The codec bench (bench/codec.ts) compares the hand codec (src/txn-encode.ts, txn-decode.ts)
// with one generated from etcd's rpc.proto by protobuf-es (bench/generated/) and with
// protobufjs's code for the same file. Here: all three send the same bytes and read etcd's real
// answers of a batched claim to the same values.

const server = lazy(() => startEtcd());
const clients: Etcd3[] = [];
afterAll(async () => {
  for (const client of clients) client.close();
  await (await server()).close();
});

/**
 * A decoded answer (the hand codec's or protobufjs's plain form) in the generated codec's JSON
 * form: snake_case, defaults shown, bytes in base64, unset messages left out.
 */
function handJson(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(handJson);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    // `response` names the oneof member (etcd3's `oneofs: true`); unset messages are null.
    if (name === 'response' || field === null || field === undefined) continue;
    out[name] = handJson(field);
  }
  return out;
}

const generatedJson = (bytes: Buffer) =>
  toJson(TxnResponseSchema, decodeGenerated(bytes), {
    alwaysEmitImplicit: true,
    useProtoFieldName: true,
  });

describe('the generated codecs of the bench against the hand codec, on a real etcd', () => {
  it('encodes a batched claim to the same bytes and decodes its real answers to the same values', async () => {
    const client = clientOf(await server());
    clients.push(client);
    // Lease ids above 2^53 (etcd's own use 63 bits): a lossy int64 shows in the answers' kvs.
    const recordLease = '9007199254740993';
    const jobLease = '9007199254740995';
    await client.leaseClient.leaseGrant({ TTL: 60, ID: recordLease });
    await client.leaseClient.leaseGrant({ TTL: 60, ID: jobLease });
    // Every shape a batched request takes; a catch-up claim's 4 reads leave room for 121.
    const kinds: RequestShape[] = ['exclusive', 'per-fire', 'early', 'catch-up'];
    const shapes = Array.from({ length: 120 }, (_, i) => kinds[i % 4] as RequestShape);
    const settings = { prefix: `codec-gen/${Date.now()}/`, fireAt: Date.now(), shapes };
    const leases = { recordLease, jobLease };
    const first = batchedClaim({ ...settings, ...leases, owner: 'instance-a' });
    const second = batchedClaim({ ...settings, ...leases, owner: 'instance-b' });

    const request = encodeByHand(first);
    expect(Buffer.from(encodeGenerated(first)).equals(request)).toBe(true);
    expect(Buffer.from(encodeGenerated(second)).equals(encodeByHand(second))).toBe(true);
    expect(Buffer.from(encodeWithProtobufjs(first)).equals(request)).toBe(true);
    expect(Buffer.from(encodeWithProtobufjs(second)).equals(encodeByHand(second))).toBe(true);
    // the drop-in writes some defaults the others leave out: the same request field for field
    expect(sameTxnRequest(encodeWithProtobufjsDropIn(first), request)).toBe(true);
    expect(sameTxnRequest(encodeWithProtobufjsDropIn(second), request)).toBe(false);

    const won = await sendForBytes(client, request);
    const lost = await sendForBytes(client, encodeByHand(second));
    for (const bytes of [won, lost]) {
      const generated = generatedJson(bytes);
      expect(handJson(decodeByHand(bytes))).toEqual(generated);
      expect(handJson(protobufjsObject(decodeWithProtobufjs(bytes)))).toEqual(generated);
      expect(handJson(decodeWithProtobufjsDropIn(bytes))).toEqual(generated);
    }
    const wonByHand = decodeByHand(won);
    const wonGenerated = decodeGenerated(won);
    expect(wonByHand.succeeded).toBe(true);
    expect(wonGenerated.responses).toHaveLength(120);
    expect(String(wonGenerated.header?.revision)).toBe(wonByHand.header.revision);
    // A loser reads the winner's record: its lease id, exact beyond 2^53, in both codecs.
    const lostByHand = decodeByHand(lost);
    const lostGenerated = decodeGenerated(lost);
    const handRecord = lostByHand.responses[0]?.response_txn?.responses[0]?.response_range?.kvs[0];
    const nested = lostGenerated.responses[0]?.response;
    const inner = nested?.case === 'responseTxn' ? nested.value.responses[0]?.response : undefined;
    const generatedRecord = inner?.case === 'responseRange' ? inner.value.kvs[0] : undefined;
    expect(handRecord?.lease).toBe(recordLease);
    expect(generatedRecord?.lease).toBe(BigInt(recordLease));
    expect(JSON.parse(String(handRecord?.value))).toEqual({ owner: 'instance-a', outcome: 'won' });
  });
});
