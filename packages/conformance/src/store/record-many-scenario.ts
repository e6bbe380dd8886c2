import { randomUUID } from 'node:crypto';
import type { Execution, Store } from '@fleetcron/core';
import { expect } from 'vitest';
import type { StoreScenario } from '../types.js';
import { using } from '../util.js';

const BASE = Date.UTC(2026, 0, 4);

/** An execution of `job` at second `i`, with `status`. */
function execution(
  job: string,
  i: number,
  status: Execution['status'],
  id: string = randomUUID(),
): Execution {
  const fireAt = BASE + i * 1000;
  const done = status !== 'running';
  return {
    ...{ id, job, fireAt, status, attempt: 1, instanceId: 'instance-1', token: i + 1 },
    ...{ startedAt: fireAt + 5, finishedAt: done ? fireAt + 50 : null },
    ...{
      error: status === 'failed' ? 'boom' : null,
      reason: status === 'skipped' ? 'overlap' : null,
    },
  };
}

async function rows(store: Store, job: string) {
  const page = await store.history(job, { limit: 100 });
  return page.executions.map((e) => [e.fireAt - BASE, e.status]).sort();
}

/**
 * Store scenario: `recordMany` (optional) writes as `record` of each would, in order: a start and
 * its outcome in one batch, a second outcome of a row dropped (the first wins, also across
 * batches), the job's last outcome from the last terminal write, many jobs at once, and an empty
 * batch. A store without it is checked to leave it out (the scheduler then writes rows singly).
 */
export const recordManyAsRecord: StoreScenario = {
  title: 'recordMany (when present) writes as record of each, in order; the first outcome wins',
  timeoutMs: 60_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const store = await fixture.newStore();
      if (store.recordMany === undefined) {
        expect(store.recordMany, 'a store without recordMany').toBeUndefined();
        return;
      }
      await store.recordMany([]);
      const job = 'record-many';
      const a = execution(job, 1, 'succeeded');
      const b = execution(job, 2, 'failed');
      await store.recordMany([
        execution(job, 1, 'running', a.id),
        execution(job, 2, 'running', b.id),
        a,
        b,
        { ...a, status: 'lease_lost', error: 'late' }, // a second outcome: dropped
        execution(job, 3, 'running'),
      ]);
      expect(await rows(store, job)).toEqual([
        [1000, 'succeeded'],
        [2000, 'failed'],
        [3000, 'running'],
      ]);
      expect(await store.getJobState(job)).toMatchObject({
        lastStatus: 'failed',
        lastFireAt: b.fireAt,
        lastFinishedAt: b.finishedAt,
      });
      // across batches: a terminal row keeps its outcome; a batch sent twice changes nothing
      const again = [{ ...b, status: 'succeeded' as const }, execution(job, 4, 'skipped')];
      await store.recordMany(again);
      await store.recordMany(again);
      expect(await rows(store, job)).toEqual([
        [1000, 'succeeded'],
        [2000, 'failed'],
        [3000, 'running'],
        [4000, 'skipped'],
      ]);
      expect(await store.getJobState(job)).toMatchObject({ lastStatus: 'skipped' });
      // many jobs in one batch, in any order
      const many = Array.from({ length: 300 }, (_, i) =>
        execution(`record-many-${i % 30}`, i, 'succeeded'),
      );
      await store.recordMany(many.reverse());
      for (let j = 0; j < 30; j++) {
        const page = await store.history(`record-many-${j}`, { limit: 100 });
        expect(page.executions.length, `record-many-${j}: its rows`).toBe(10);
        // reversed: the job's last terminal write in the batch is its oldest fire
        expect((await store.getJobState(`record-many-${j}`)).lastFireAt).toBe(BASE + j * 1000);
      }
    });
  },
};
