import { storeScenarios } from '@fleetcron/conformance';
import type { Execution } from '@fleetcron/core';
import { etcdEndpoints } from '@fleetcron/testkit/vitest';
import { describe, expect, it } from 'vitest';
import type { EtcdStore } from '../src/index.js';
import { etcdStoreFixture, storeFixtures } from './fixture.js';

// recordMany beyond the conformance suite: trims (small maxHistory), transactions split by a
// small maxTxnOps (a job over several transactions), and concurrent batches on the same rows
// (the compare on each index entry's mod_revision makes a transaction retry, never overwrite).

const endpoints = etcdEndpoints();

function execution(id: string, status: Execution['status'], at: number): Execution {
  const done = status !== 'running';
  return {
    ...{ id, job: 'race', fireAt: at, status, attempt: 1, instanceId: 'i', token: 1 },
    ...{ startedAt: at + 1, finishedAt: done ? at + 9 : null, error: null, reason: null },
  };
}

describe('recordMany', () => {
  it('agrees with record at maxHistory 10 and maxTxnOps 4 (trims, split transactions)', async () => {
    await storeScenarios.recordManyMatchesRecord.run({
      name: 'etcd maxHistory 10, maxTxnOps 4',
      create: storeFixtures(endpoints, { maxHistory: 10, maxTxnOps: 4 }),
    });
    await storeScenarios.recordManyAsRecord.run({
      name: 'etcd maxTxnOps 4',
      create: storeFixtures(endpoints, { maxTxnOps: 4 }),
    });
    expect(storeScenarios.recordManyMatchesRecord.title).toContain('agree');
  }, 120_000);

  it('two stores writing different outcomes of the same rows at once: the first outcome wins, the other is refused', async () => {
    const fixture = await etcdStoreFixture({ endpoints: await endpoints() }, { maxTxnOps: 16 });
    try {
      const a = (await fixture.newStore()) as EtcdStore;
      const b = (await fixture.newStore()) as EtcdStore;
      const ids = Array.from({ length: 60 }, (_, i) => `r${String(i).padStart(3, '0')}`);
      await a.recordMany(ids.map((id, i) => execution(id, 'running', i * 1000)));
      for (let round = 0; round < 3; round++) {
        const mine = ids.map((id, i) => execution(`${round}-${id}`, 'running', i * 1000));
        await a.recordMany(mine);
        await Promise.all([
          a.recordMany(mine.map((e) => ({ ...e, status: 'succeeded', finishedAt: e.fireAt + 9 }))),
          b.recordMany(mine.map((e) => ({ ...e, status: 'lease_lost', finishedAt: e.fireAt + 7 }))),
        ]);
        const rows = (await a.history('race', { limit: 1000 })).executions.filter((e) =>
          e.id.startsWith(`${round}-`),
        );
        expect(rows.length, 'one row per id').toBe(ids.length);
        for (const row of rows) {
          // the row holds one whole outcome: the status with its own finishedAt
          const pair = [row.status, row.finishedAt! - row.fireAt];
          expect([
            ['succeeded', 9],
            ['lease_lost', 7],
          ]).toContainEqual(pair);
        }
        // each row key was put twice: its start, then ONE outcome (the loser was refused)
        const kvs = (await fixture.admin.getAll().prefix(`${fixture.prefix}e/`).exec()).kvs;
        const versions = kvs
          .filter((kv) => kv.key.toString().includes(`:${round}-`))
          .map((kv) => Number(kv.version));
        expect(versions, 'puts per row key: a start and one outcome').toEqual(ids.map(() => 2));
      }
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
