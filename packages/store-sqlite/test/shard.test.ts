import type { StoreFixture } from '@fleetcron/conformance';
import { type Execution, groupFires } from '@fleetcron/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// Sharded fires (issue 16): Execution.shard is kept and returned; older files gain the column.

const create = storeFixtures();

function row(over: Partial<Execution> & { id: string }): Execution {
  return {
    job: 'sharded job ✓',
    fireAt: 1_700_000_000_000,
    status: 'running',
    attempt: 1,
    instanceId: 'i-a',
    token: 7,
    startedAt: 1_700_000_000_010,
    finishedAt: null,
    error: null,
    reason: null,
    requestedBy: null,
    ...over,
  };
}

/** Records parts, a broadcast run and a plain fire; reads them back through a second store. */
async function checkShards(fixture: StoreFixture): Promise<void> {
  const writer = await fixture.newStore();
  const reader = await fixture.newStore();
  const job = 'sharded job ✓';
  await writer.record(row({ id: 'part-0', shard: { index: 0, count: 3 } }));
  await writer.record(
    row({ id: 'part-2', shard: { index: 2, count: 3 }, startedAt: 1_700_000_000_012 }),
  );
  await writer.record(
    row({
      id: 'each-b',
      instanceId: 'i-b',
      fireAt: 1_699_999_999_000,
      startedAt: 1_699_999_999_005,
      shard: { index: 1, count: 2, each: true },
    }),
  );
  await writer.record(
    row({
      id: 'plain',
      fireAt: 1_699_999_998_000,
      startedAt: 1_699_999_998_001,
      status: 'succeeded',
      finishedAt: 1_699_999_998_009,
    }),
  );
  // the outcome of part 0 keeps its shard
  await writer.record(
    row({
      id: 'part-0',
      shard: { index: 0, count: 3 },
      status: 'succeeded',
      finishedAt: 1_700_000_000_050,
    }),
  );

  const { executions } = await reader.history(job);
  const byId = new Map(executions.map((e) => [e.id, e]));
  expect(byId.get('part-0')).toMatchObject({ status: 'succeeded', shard: { index: 0, count: 3 } });
  expect(byId.get('part-2')?.shard).toEqual({ index: 2, count: 3 });
  expect(byId.get('each-b')?.shard).toEqual({ index: 1, count: 2, each: true });
  expect(byId.get('plain')?.shard ?? null).toBeNull();
  const succeeded = await reader.history(job, { status: 'succeeded' });
  expect(succeeded.executions.map((e) => [e.id, e.shard ?? null])).toEqual([
    ['part-0', { index: 0, count: 3 }],
    ['plain', null],
  ]);
  const fires = groupFires(executions);
  expect(fires.map((f) => [f.kind, f.executions.map((e) => e.id)])).toEqual([
    ['parts', ['part-0', 'part-2']],
    ['each', ['each-b']],
    ['single', ['plain']],
  ]);
  await expect(
    writer.record(row({ id: 'bad', shard: { index: 3, count: 3 } })),
  ).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'shard' });
}

describe('SqliteStore: parts of sharded fires', () => {
  it('keeps Execution.shard and returns it (absent for a plain fire)', async () => {
    const fixture = await create();
    try {
      await checkShards(fixture);
    } finally {
      await fixture.close();
    }
  });

  it('opening a file made before shards adds the shard column', async () => {
    const fixture = await create();
    try {
      const db = new Database(fixture.file);
      db.exec(`CREATE TABLE fleetcron_executions (id TEXT PRIMARY KEY, job TEXT NOT NULL,
        fire_at INTEGER NOT NULL, status TEXT NOT NULL, attempt INTEGER NOT NULL,
        instance_id TEXT NOT NULL, token INTEGER, started_at INTEGER NOT NULL,
        finished_at INTEGER, error TEXT, reason TEXT, requested_by TEXT)`);
      db.close();
      const store = new SqliteStore(fixture.file);
      try {
        await store.record(row({ id: 'p', shard: { index: 1, count: 2 } }));
        const { executions } = await store.history('sharded job ✓');
        expect(executions[0]?.shard).toEqual({ index: 1, count: 2 });
      } finally {
        await store.close();
      }
    } finally {
      await fixture.close();
    }
  });
});
