import type { ClaimRequest } from '@fleetcron/core';
import { hashSlot } from '@fleetcron/redis-shared';
import { type RedisCluster, startRedisCluster } from '@fleetcron/testkit';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockKeys, REDIS_MAX_BATCH, RedisLock } from '../src/index.js';
import { uniquePrefix } from './fixture.js';

// claimMany on a real 3-primary Redis Cluster: batches spread over many hash slots (one script
// call per slot, no CROSSSLOT), answered as single claims would, up to capabilities.maxBatch.

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(() => cluster?.close()); // also disconnects every client made by clusterClient()

/** A client of the test cluster, never an unhandled 'error'; disconnected by cluster.close(). */
const clusterClient = (options: { keyPrefix?: string } = {}): Cluster =>
  cluster
    .track(new Cluster([...cluster.nodes], { redisOptions: { ...options } }))
    .on('error', () => {});

const req = (key: string, fireAt: number, owner: string, exclusive = true): ClaimRequest => ({
  key,
  fireAt,
  owner,
  leaseMs: 30_000,
  exclusive,
});

describe('RedisLock.claimMany on Redis Cluster', () => {
  it('computes the hash slot of every key as the cluster does (CLUSTER KEYSLOT)', async () => {
    const client = clusterClient();
    const names = ['a', '123456789', 'job {x}', '{}', 'ü/ß €', '😀', 'x'.repeat(512), '%7B', ''];
    for (const name of names) {
      for (const prefix of ['fleetcron', 'p:q']) {
        const keys = lockKeys(prefix, name);
        for (const key of [keys.fires, keys.fire + 1, `{{${name}}}`, `plain ${name}`]) {
          expect(hashSlot(key), key).toBe(await client.cluster('KEYSLOT', key));
        }
      }
    }
  });

  it('claims a batch of 1,000 keys (and of maxBatch) over many slots, with a keyPrefix too', async () => {
    for (const keyPrefix of [undefined, 'app:']) {
      const prefix = uniquePrefix();
      const client = clusterClient(keyPrefix ? { keyPrefix } : {});
      const lock = new RedisLock(client, { prefix });
      const other = new RedisLock(clusterClient(keyPrefix ? { keyPrefix } : {}), { prefix });
      const t = Date.now() - 1_000;
      const batch = Array.from({ length: 1_000 }, (_, i) => req(`job-${i}`, t, 'me'));
      const slots = new Set(batch.map((r) => hashSlot(lockKeys(prefix, r.key).fires)));
      expect(slots.size).toBeGreaterThan(900);
      const results = await lock.claimMany(batch);
      expect(results.map((r) => r.status)).toEqual(batch.map(() => 'won'));
      for (const [i, result] of results.entries()) {
        expect(result.status === 'won' && result.lease.key).toBe(`job-${i}`);
      }
      // Re-sent: the same leases; another owner: lost claimed, each.
      const again = await lock.claimMany(batch);
      expect(again.map((r) => (r.status === 'won' ? r.lease.token : null))).toEqual(
        results.map((r) => (r.status === 'won' ? r.lease.token : null)),
      );
      const lost = await other.claimMany(batch.map((r) => ({ ...r, owner: 'other' })));
      expect(new Set(lost.map((r) => (r.status === 'lost' ? r.reason : r.status)))).toEqual(
        new Set(['claimed']),
      );
      const seen = await lock.inspect('job-999');
      expect(seen.fires.map((f) => f.owner)).toEqual(['me']);
      if (keyPrefix) {
        const stored = await client.exists(lockKeys(prefix, 'job-999').job); // keyPrefix added
        expect(stored).toBe(1);
      }
      const leases = results.flatMap((r) => (r.status === 'won' ? [r.lease] : []));
      expect(
        (
          await lock.extendMany(
            leases,
            leases.map(() => 60_000),
          )
        ).every(Boolean),
      ).toBe(true);
      expect((await lock.releaseMany(leases)).every((released) => released)).toBe(true);
    }
    const lock = new RedisLock(clusterClient(), { prefix: uniquePrefix() });
    const t = Date.now() - 1_000;
    const full = Array.from({ length: REDIS_MAX_BATCH }, (_, i) =>
      req(`job-${i % 1_500}`, t - Math.floor(i / 1_500), 'me', false),
    );
    const results = await lock.claimMany(full);
    expect(results.filter((r) => r.status === 'won')).toHaveLength(REDIS_MAX_BATCH);
  }, 60_000);

  it('lets two instances send overlapping batches over many slots: one winner per fire', async () => {
    const prefix = uniquePrefix();
    const a = new RedisLock(clusterClient(), { prefix });
    const b = new RedisLock(clusterClient(), { prefix });
    const t = Date.now() - 1_000;
    for (let round = 0; round < 3; round++) {
      const fires = Array.from({ length: 600 }, (_, i) => ({
        key: `job-${i % 200}`,
        fireAt: t - round * 1_000 - Math.floor(i / 200),
      }));
      const [ra, rb] = await Promise.all([
        a.claimMany(fires.map((f) => req(f.key, f.fireAt, 'a', false))),
        b.claimMany([...fires].reverse().map((f) => req(f.key, f.fireAt, 'b', false))),
      ]);
      const winners = new Map<string, number>();
      for (const r of [...ra, ...rb]) {
        if (r.status !== 'won') continue;
        const id = `${r.lease.key}@${r.lease.fireAt}`;
        winners.set(id, (winners.get(id) ?? 0) + 1);
      }
      expect(winners.size, `round ${round}: every fire has a winner`).toBe(fires.length);
      expect(
        [...winners.values()].every((n) => n === 1),
        'no fire won twice',
      ).toBe(true);
    }
  }, 60_000);
});
