import { randomUUID } from 'node:crypto';
import type { Execution } from '@fleetcron/core';
import { RedisStore } from '@fleetcron/store-redis';
import type {} from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runFleetcron } from './built-bin.js';
import { seedFleet } from './seed.js';

// Issue 16: `fleetcron history` shows a sharded fire as one fire with its parts.

const client = new Redis(inject('fleetcronRedisUrl'));
client.on('error', () => {});
afterAll(() => {
  client.disconnect();
});

describe('fleetcron history of a sharded job', () => {
  it('prints one line per sharded fire with its parts under it; --json carries fires', async () => {
    const prefix = `cli-shards-${randomUUID()}`;
    const store = new RedisStore(client, { prefix });
    await seedFleet(store); // registers `billing` on i-1
    const fireAt = Date.now() - 60_000;
    const part = (index: number, status: Execution['status']): Execution => ({
      id: randomUUID(),
      job: 'billing',
      fireAt,
      status,
      attempt: 1,
      instanceId: `i-${index % 2}`,
      token: 100 + index,
      startedAt: fireAt + 20 + index,
      finishedAt: status === 'running' ? null : fireAt + 40 + index,
      error: null,
      shard: { index, count: 3 },
    });
    for (const [i, status] of [
      [0, 'succeeded'],
      [1, 'failed'],
      [2, 'running'],
    ] as const) {
      await store.record(part(i, status));
    }
    const args = ['--redis', inject('fleetcronRedisUrl'), '--prefix', prefix];
    const text = await runFleetcron(['history', 'billing', ...args]);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trim().split('\n');
    const head = lines.findIndex((l) => l.includes('3 parts:'));
    expect(head, text.stdout).toBeGreaterThan(0);
    expect(lines[head]).toContain(new Date(fireAt).toISOString());
    for (const status of ['1 running', '1 failed', '1 succeeded'])
      expect(lines[head]).toContain(status);
    expect(
      lines.slice(head + 1, head + 4).map((l) => /part (\d) of 3\s+(\w+)/.exec(l)?.slice(1)),
    ).toEqual([
      ['0', 'succeeded'],
      ['1', 'failed'],
      ['2', 'running'],
    ]);
    const json = await runFleetcron(['history', 'billing', ...args, '--json']);
    const page = JSON.parse(json.stdout) as {
      fires: Array<{ kind: string; count: number | null }>;
    };
    expect(page.fires[0]).toMatchObject({ kind: 'parts', count: 3 });
  });
});
