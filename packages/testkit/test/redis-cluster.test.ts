import { Cluster } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { type RedisCluster, startRedisCluster } from '../src/redis-cluster.js';
import { redisCommands } from '../src/resp.js';
import { waitFor } from '../src/wait.js';
import { pgrep, portOpen } from './helpers.js';

const clusters: RedisCluster[] = [];
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.close()));
});

describe('startRedisCluster (local)', () => {
  it('starts a 3-primary cluster that serves every slot, and leaves nothing behind', async () => {
    const cluster = await startRedisCluster();
    clusters.push(cluster);
    expect(cluster.nodes).toHaveLength(3);
    expect(cluster.version).toMatch(/^\d+\.\d+/);
    for (const port of cluster.ports) {
      const [info] = await redisCommands({ host: '127.0.0.1', port }, [['CLUSTER', 'INFO']]);
      expect(String(info)).toContain('cluster_slots_assigned:16384');
    }
    const client = cluster.track(new Cluster([...cluster.nodes]));
    client.on('error', () => {});
    const keys = Array.from({ length: 30 }, (_, i) => `key-${i}`);
    for (const key of keys) await client.set(key, key);
    const slots = await Promise.all(keys.map((key) => client.cluster('KEYSLOT', key)));
    const owners = new Set(slots.map((slot) => Math.floor((Number(slot) * 3) / 16_384)));
    expect(owners.size).toBe(3); // the keys spread over every primary
    for (const key of keys) expect(await client.get(key)).toBe(key);
    for (const port of cluster.ports) expect(pgrep(`:${port} `).length).toBeGreaterThan(0);

    await cluster.close();
    // The tracked client was disconnected by close(), not left reconnecting.
    expect(['disconnecting', 'close', 'end']).toContain(client.status);
    await cluster.close(); // idempotent
    for (const port of cluster.ports) {
      await waitFor(async () => !(await portOpen(port)) && pgrep(`:${port} `).length === 0, {
        timeoutMs: 20_000,
        message: `node on port ${port} gone`,
      });
    }
  });

  it('starts a single-node cluster', async () => {
    const cluster = await startRedisCluster({ primaries: 1 });
    clusters.push(cluster);
    const [info] = await redisCommands({ host: '127.0.0.1', port: cluster.ports[0] as number }, [
      ['CLUSTER', 'INFO'],
    ]);
    expect(String(info)).toContain('cluster_state:ok');
    await cluster.close();
    expect(await portOpen(cluster.ports[0] as number)).toBe(false);
  });

  it('rejects a bad primaries count', async () => {
    await expect(startRedisCluster({ primaries: 0 })).rejects.toThrow(/primaries/);
  });
});
