import type { StoreFixture } from '@fleetcron/conformance';
import { type Execution, groupFires } from '@fleetcron/core';
import { isolatedPostgres } from '@fleetcron/testkit';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// Sharded fires (issue 16): Execution.shard is kept and returned; older tables gain the column.

let database: ReturnType<typeof isolatedPostgres> | undefined;
const databaseUrl = async () => {
  database ??= isolatedPostgres(inject('fleetcronPostgresUrl'));
  return (await database).url;
};
afterAll(async () => {
  if (database) await (await database).drop();
});
const create = storeFixtures(databaseUrl);

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

describe('PostgresStore: parts of sharded fires', () => {
  it('keeps Execution.shard and returns it (absent for a plain fire)', async () => {
    const fixture = await create();
    try {
      await checkShards(fixture);
    } finally {
      await fixture.close();
    }
  });

  it('migrate() adds the shard column to an executions table made before it', async () => {
    const fixture = await create();
    try {
      const schema = `${fixture.schema}_old`;
      await fixture.admin.query(`CREATE SCHEMA "${schema}";
        CREATE TABLE "${schema}".fleetcron_executions (id text COLLATE "C" PRIMARY KEY,
          job text COLLATE "C" NOT NULL, fire_at bigint NOT NULL, status text NOT NULL,
          attempt integer NOT NULL, instance_id text NOT NULL, token bigint,
          started_at bigint NOT NULL, finished_at bigint, error text, reason text,
          requested_by text);`);
      try {
        const store = new PostgresStore(fixture.admin, { schema });
        await store.migrate();
        await store.record(row({ id: 'p', shard: { index: 1, count: 2 } }));
        const { executions } = await store.history('sharded job ✓');
        expect(executions[0]?.shard).toEqual({ index: 1, count: 2 });
      } finally {
        await fixture.admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      }
    } finally {
      await fixture.close();
    }
  });
});
