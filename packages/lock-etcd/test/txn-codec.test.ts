import { startEtcd } from '@fleetcron/testkit';
import type { Etcd3, IRequestOp, ITxnRequest, ITxnResponse } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { rawTxnOf } from '../src/raw-txn.js';
import { encodeTxnRequest } from '../src/txn-encode.js';
import { clientOf, lazy } from './fixture.js';

const server = lazy(() => startEtcd());
const clients: Etcd3[] = [];
afterAll(async () => {
  for (const client of clients) client.close();
  await (await server()).close();
});

/** A client on the test server, closed after the file. */
async function newClient(): Promise<Etcd3> {
  const client = clientOf(await server());
  clients.push(client);
  return client;
}

const key = (prefix: string, name: string) => Buffer.from(`${prefix}${name}`);
const deadline = () => new Date(Date.now() + 5_000);

/** Fields that differ between two runs of one transaction (and keys, for twin-key runs). */
const VARYING = ['revision', 'create_revision', 'mod_revision', 'raft_term'];

/** The answer without what differs between two runs of the same transaction. */
function shape(res: ITxnResponse, withKeys = true): unknown {
  return JSON.parse(
    JSON.stringify(res, (name, value) =>
      VARYING.includes(name) || (!withKeys && name === 'key') ? 'n' : value,
    ),
  );
}

describe('the adapter transaction codec (txn-encode / txn-decode) against a real etcd', () => {
  it('answers every operation kind exactly as etcd3 decodes it, int64s beyond 2^53 included', async () => {
    const client = await newClient();
    const raw = rawTxnOf(client);
    expect(raw).toBeDefined();
    const prefix = `codec/${Date.now()}/`;
    // A lease id above 2^53 (etcd's own ids use 63 bits): exact only as a string.
    const big = '9007199254740993';
    await client.leaseClient.leaseGrant({ TTL: 60, ID: big });
    const puts: IRequestOp[] = ['a', 'b', 'c'].map((name) => ({
      request_put: { key: key(prefix, name), value: Buffer.from(`v-${name}`), lease: big },
    }));
    const written = await raw!({ compare: [], success: puts, failure: [] }, deadline());
    expect(Number(written.header.revision)).toBeGreaterThan(0);

    const reads = (p: string): ITxnRequest => ({
      compare: [
        { key: key(p, 'a'), target: 'Create', result: 'Greater', create_revision: 0 },
        { key: key(p, 'b'), target: 'Value', result: 'Equal', value: Buffer.from('v-b') },
        { key: key(p, 'c'), target: 'Lease', result: 'Equal', lease: big },
        { key: key(p, 'zz'), target: 'Version', result: 'Equal', version: 0 },
      ],
      success: [
        { request_range: { key: key(p, 'a') } },
        { request_range: { key: key(p, ''), range_end: key(p, '~'), count_only: true } },
        { request_range: { key: key(p, ''), range_end: key(p, '~'), limit: 2 } },
        { request_range: { key: key(p, 'missing') } },
        {
          request_txn: {
            compare: [{ key: key(p, 'a'), target: 'Mod', result: 'Less', mod_revision: 1 }],
            success: [],
            failure: [{ request_range: { key: key(p, 'b'), keys_only: true } }],
          },
        },
      ],
      failure: [],
    });
    const mine = await raw!(reads(prefix), deadline());
    const theirs = await client.kv.txn(reads(prefix));
    expect(mine.succeeded).toBe(true);
    expect(shape(mine)).toEqual(shape(theirs));
    expect(mine.responses[0]?.response_range?.kvs[0]?.lease).toBe(big);
    expect(mine.responses[1]?.response_range?.count).toBe('3');
    expect(mine.responses[2]?.response_range?.more).toBe(true);
    // The failure branch too, and a delete with its previous values.
    const deletes = (p: string): ITxnRequest => ({
      compare: [{ key: key(p, 'a'), target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [],
      failure: [
        { request_delete_range: { key: key(p, 'a'), prev_kv: true } },
        { request_range: { key: key(p, 'a') } },
      ],
    });
    const twin = `${prefix}twin/`;
    await client.kv.txn({
      compare: [],
      success: ['a', 'b', 'c'].map((name) => ({
        request_put: { key: key(twin, name), value: Buffer.from(`v-${name}`), lease: big },
      })),
      failure: [],
    });
    const deletedMine = await raw!(deletes(prefix), deadline());
    const deletedTheirs = await client.kv.txn(deletes(twin));
    expect(deletedMine.succeeded).toBe(false);
    expect(deletedMine.responses[0]?.response_delete_range?.deleted).toBe('1');
    expect(shape(deletedMine, false)).toEqual(shape(deletedTheirs, false));
  });

  it('encodes what protobuf requires: defaults left out, a oneof member of 0 kept', () => {
    const empty = encodeTxnRequest({ compare: [], success: [], failure: [] });
    expect(empty.length).toBe(0);
    const absent = encodeTxnRequest({
      compare: [{ key: Buffer.from('k'), target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [],
      failure: [],
    });
    // field 1 (compare), 6 bytes: target Create (2: 1), key (3: "k"), create_revision (5: 0)
    expect([...absent]).toEqual([0x0a, 7, 0x10, 1, 0x1a, 1, 0x6b, 0x28, 0]);
  });
});
