import {
  runAuditConformance,
  runScheduleStoreConformance,
  type StoreConformanceOptions,
  type StoreFixture,
  storeScenarios,
} from '@fleetcron/conformance';
import { type RedisCluster, startRedisCluster } from '@fleetcron/testkit';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore, type RedisStoreOptions, storeKeys } from '../src/index.js';
import { killScheduleSubscribers, uniquePrefix } from './fixture.js';

// The whole store conformance suite on a real 3-primary Redis Cluster: every script touches one
// slot (no CROSSSLOT), the job registry lives in its own slot, prune() walks jobs on all nodes.
let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(() => cluster?.close()); // also disconnects every client made by clusterClient()

/** A client of the test cluster, never an unhandled 'error'; disconnected by cluster.close(). */
const clusterClient = (): Cluster =>
  cluster.track(new Cluster([...cluster.nodes])).on('error', () => {});

/** Fixtures on the test cluster whose stores are made with `storeOptions`. */
const clusterFixtures =
  (storeOptions: Omit<RedisStoreOptions, 'prefix'> = {}) =>
  async () => {
    const prefix = uniquePrefix();
    const clients: Cluster[] = [];
    const stores: RedisStore[] = [];
    return {
      prefix,
      async newStore() {
        const client = clusterClient();
        clients.push(client);
        const store = new RedisStore(client, { ...storeOptions, prefix });
        stores.push(store);
        return store;
      },
      async close() {
        for (const store of stores.splice(0)) await store.close(); // its subscribers
        for (const client of clients.splice(0)) client.disconnect();
      },
    };
  };

const options: StoreConformanceOptions = { name: 'redis cluster', create: clusterFixtures() };

// The audit log on the Cluster: a pause, a run request or a schedule write and its entry are one
// script in the fleet's slot (`{prefix}`), never CROSSSLOT.
runAuditConformance({
  name: 'redis cluster',
  create: clusterFixtures({ audit: { maxEntries: 40 } }),
  maxEntries: 40,
});

// Stored schedules on the Cluster: records, indexes and the PUBLISH in one slot's scripts; push
// through a connection to one node, killed on whichever node holds it.
runScheduleStoreConformance({
  name: 'redis cluster',
  create: options.create,
  async dropPush(fixture: StoreFixture) {
    const { prefix } = fixture as StoreFixture & { prefix: string };
    let killed = 0;
    for (const node of cluster.nodes) {
      killed += await killScheduleSubscribers(`redis://${node.host}:${node.port}`, prefix);
    }
    if (killed !== 1) throw new Error(`expected one schedule subscriber to kill, found ${killed}`);
  },
});

describe('redis cluster store', () => {
  it('keeps each job in one slot and prunes jobs spread over the cluster slots', async () => {
    const client = clusterClient();
    const prefix = uniquePrefix();
    const store = new RedisStore(client, { prefix });
    const jobs = Array.from({ length: 12 }, (_, i) => `job-${i}-{x}`);
    for (const job of jobs) {
      for (let i = 0; i < 3; i++) {
        await store.record({
          id: `${job}-${i}`,
          job,
          fireAt: 1000 + i,
          status: 'succeeded',
          attempt: 1,
          instanceId: 'i',
          token: i,
          startedAt: 1000 + i,
          finishedAt: 1001 + i,
          error: null,
        });
      }
    }
    const slots = new Set<number>();
    for (const job of jobs) {
      const keys = Object.values(storeKeys(prefix, job));
      const jobSlots = new Set(await Promise.all(keys.map((k) => client.cluster('KEYSLOT', k))));
      expect(jobSlots.size).toBe(1);
      slots.add([...jobSlots][0] as number);
    }
    expect(slots.size).toBeGreaterThan(1);
    expect(await store.prune(1002)).toBe(jobs.length * 2);
    for (const job of jobs) {
      expect((await store.history(job)).executions.map((e) => e.startedAt)).toEqual([1002]);
    }
  });

  for (const scenario of Object.values(storeScenarios)) {
    it(scenario.title, () => scenario.run(options), scenario.timeoutMs);
  }
});
