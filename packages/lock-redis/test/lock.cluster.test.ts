import { type RedisCluster, startRedisCluster } from '@fleetcron/testkit';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockKeys, RedisLock, ReplicaAckError } from '../src/index.js';
import { uniquePrefix } from './fixture.js';

// A real 3-primary Redis Cluster: every script touches one slot (no CROSSSLOT) and jobs spread
// over the nodes. The conformance scenarios on a cluster: lock.cluster.conformance.test.ts.
let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(() => cluster?.close()); // also disconnects every client made by clusterClient()

/** A client of the test cluster, never an unhandled 'error'; disconnected by cluster.close(). */
const clusterClient = (): Cluster =>
  cluster.track(new Cluster([...cluster.nodes])).on('error', () => {});

describe('redis cluster', () => {
  it('spreads jobs over the primaries, each job in one slot, odd names included', async () => {
    const client = clusterClient();
    const prefix = uniquePrefix();
    const lock = new RedisLock(client, { prefix });
    const t = Date.now();
    const names = Array.from({ length: 30 }, (_, i) => `job ${i} {${i}} /ü`);
    for (const name of names) {
      expect(
        (await lock.claim({ key: name, fireAt: t, owner: 'a', leaseMs: 5000, exclusive: true }))
          .status,
      ).toBe('won');
      expect((await lock.inspect(name)).fires).toHaveLength(1);
    }
    const holders = new Set<number>();
    for (const name of names) {
      const keys = lockKeys(prefix, name);
      const slots = new Set(
        await Promise.all(
          [keys.fire + t, keys.fires, keys.job].map((k) => client.cluster('KEYSLOT', k)),
        ),
      );
      expect(slots.size).toBe(1);
      const slot = [...slots][0] as number;
      const ranges = (await client.cluster('SHARDS')) as unknown[];
      holders.add(ranges.findIndex((shard) => ownsSlot(shard, slot)));
    }
    expect(holders.size).toBeGreaterThan(1);
    const report = await lock.verifyDurability();
    expect(report.nodes).toHaveLength(3);
  });

  it('replicaAck asks each primary that wrote a win (these have no replica: 0 acknowledged, every win handed back)', async () => {
    const prefix = uniquePrefix();
    const lock = new RedisLock(clusterClient(), {
      prefix,
      replicaAck: { replicas: 1, timeoutMs: 100 },
    });
    const t = Date.now();
    const names = Array.from({ length: 12 }, (_, i) => `acked ${i}`);
    const requests = names.map((key) => ({
      key,
      fireAt: t,
      owner: 'a',
      leaseMs: 5000,
      exclusive: true,
    }));
    for (const attempt of [lock.claim(requests[0]!), lock.claimMany(requests)]) {
      const error = await attempt.then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ReplicaAckError);
      // 0, not null: the WAIT reached the connection of the primary that wrote the claims
      expect((error as ReplicaAckError).acknowledged).toBe(0);
    }
    const plain = new RedisLock(clusterClient(), { prefix });
    for (const name of names) expect((await plain.inspect(name)).fires, name).toEqual([]);
  });
});

/** Whether a `CLUSTER SHARDS` entry owns `slot` (its `slots` field is a flat [start, end, ...] list). */
function ownsSlot(shard: unknown, slot: number): boolean {
  const fields = shard as unknown[];
  const slots = fields[fields.indexOf('slots') + 1] as number[];
  for (let i = 0; i + 1 < slots.length; i += 2) {
    if (slot >= slots[i]! && slot <= slots[i + 1]!) return true;
  }
  return false;
}
