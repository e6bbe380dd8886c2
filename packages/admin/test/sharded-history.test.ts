import { FleetClient, MemoryStore } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { createAdminHandler } from '../src/index.js';
import { execution, seedFleet } from './fleet-fixture.js';

// Issue 16: the history API groups a sharded fire's parts into one fire (`fires`).

describe('GET history of a sharded job', () => {
  it('answers the rows and `fires`: one group per sharded fire with its parts in order', async () => {
    const store = new MemoryStore();
    await seedFleet(store);
    const fireAt = Date.now();
    for (const index of [2, 0, 1]) {
      await store.record(
        execution('billing', fireAt + 10 + index, {
          fireAt,
          instanceId: `i-${index}`,
          shard: { index, count: 3 },
        }),
      );
    }
    const handler = createAdminHandler({
      fleet: new FleetClient({ store }),
      tokens: [{ token: 'read-token-0123456789', role: 'read', name: 'viewer' }],
      onError: (error) => {
        throw error;
      },
    });
    const response = await handler(
      new Request('http://localhost/api/jobs/billing/history?limit=5', {
        headers: { authorization: 'Bearer read-token-0123456789' },
      }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      executions: Array<{ shard?: { index: number } }>;
      fires: Array<{
        kind: string;
        fireAt: number;
        count: number | null;
        executions: Array<{ shard: { index: number } }>;
      }>;
    };
    expect(body.executions.slice(0, 3).map((e) => e.shard?.index)).toEqual([2, 1, 0]);
    expect(body.fires[0]).toMatchObject({ kind: 'parts', fireAt, count: 3 });
    expect(body.fires[0]?.executions.map((e) => e.shard.index)).toEqual([0, 1, 2]);
    expect(body.fires.slice(1).every((f) => f.kind === 'single')).toBe(true);
  });
});
