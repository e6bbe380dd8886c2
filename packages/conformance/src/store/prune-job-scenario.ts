import { randomUUID } from 'node:crypto';
import { type Execution, isFleetcronError, type Store } from '@fleetcron/core';
import { compareNewestFirst } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreScenario } from '../types.js';
import { using } from '../util.js';

const BASE = Date.UTC(2026, 0, 5);

/** An execution of `job` started at second `second`; `running` ones have no end. */
function execution(job: string, second: number, status: Execution['status']): Execution {
  const startedAt = BASE + second * 1000 + 5;
  return {
    ...{ id: randomUUID(), job, fireAt: startedAt - 5, status, attempt: 1 },
    ...{ instanceId: 'instance-1', token: second + 1, startedAt },
    ...{ finishedAt: status === 'running' ? null : startedAt + 45, error: null, reason: null },
  };
}

/** Every id of `job`'s history, newest first. */
async function idsOf(store: Store, job: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.history(job, { limit: 100, cursor });
    ids.push(...page.executions.map((e) => e.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

/** Writes `executions` in one batch where the store has one. */
async function recordAll(store: Store, executions: readonly Execution[]): Promise<void> {
  if (store.recordMany) await store.recordMany(executions);
  else for (const e of executions) await store.record(e);
}

/** Bad `pruneJob` input and the field its typed error must name. */
const BAD_INPUT: Array<[string, unknown, string]> = [
  ['', { keepLast: 1, limit: 1 }, 'job'],
  ['job', { limit: 1 }, 'keepLast'],
  ['job', { keepLast: -1, limit: 1 }, 'keepLast'],
  ['job', { keepLast: 1.5, limit: 1 }, 'keepLast'],
  ['job', { before: Number.NaN, limit: 1 }, 'before'],
  ['job', { keepLast: 1, limit: 0 }, 'limit'],
  ['job', { keepLast: 1, limit: 10_001 }, 'limit'],
  ['job', { keepLast: 1 }, 'limit'],
];

/**
 * Store scenario: `pruneJob` (optional) deletes at most `limit` of one job's executions, oldest
 * first, among those beyond its newest `keepLast` or started before `before`, never a `running`
 * one, and nothing of any other job (names that prefix each other). Ties on `startedAt` are
 * ordered by id, as `history` orders them; 150 rows pruned 99 then 40 cross etcd's transaction
 * size. A store without it is checked to leave it out.
 */
export const pruneJobBounded: StoreScenario = {
  title: 'pruneJob (when present) deletes at most limit, oldest first, beyond keepLast or before',
  timeoutMs: 60_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const store = await fixture.newStore();
      if (store.pruneJob === undefined) {
        expect(store.pruneJob, 'a store without pruneJob').toBeUndefined();
        return;
      }
      const pruneJob = store.pruneJob.bind(store);
      for (const [job, input, field] of BAD_INPUT) {
        const error = await pruneJob(job, input as never).then(
          () => null,
          (e: unknown) => e,
        );
        expect(
          isFleetcronError(error, 'INVALID_OPTION') && error.field === field,
          `pruneJob(${JSON.stringify(job)}, ${JSON.stringify(input)}) names ${field}: ${String(error)}`,
        ).toBe(true);
      }

      // 'keep': seconds 0..11, seconds 1 and 3 still running. Neighbours whose names prefix it.
      const job = 'keep';
      const rows = Array.from({ length: 12 }, (_, s) =>
        execution(job, s, s === 1 || s === 3 ? 'running' : 'succeeded'),
      );
      const neighbours = ['kee', 'keep:2', 'keep/x'].flatMap((name) =>
        Array.from({ length: 5 }, (_, s) => execution(name, s, 'succeeded')),
      );
      await recordAll(store, [...rows, ...neighbours]);
      const id = (s: number) => rows[s]!.id;
      const left = (...seconds: number[]) => seconds.sort((a, b) => b - a).map((s) => id(s)); // newest first

      expect(await pruneJob('never-seen', { keepLast: 0, limit: 10 }), 'an unknown job').toBe(0);

      // keepLast 6: seconds 0..5 are beyond it, 1 and 3 run: 0, 2, 4, 5 may go, 3 per call.
      expect(await pruneJob(job, { keepLast: 6, limit: 3 }), 'limit 3 of 4 candidates').toBe(3);
      expect(await idsOf(store, job), 'the oldest three candidates went').toEqual(
        left(1, 3, 5, 6, 7, 8, 9, 10, 11),
      );
      expect(await pruneJob(job, { keepLast: 6, limit: 3 }), 'the fourth').toBe(1);
      expect(await pruneJob(job, { keepLast: 6, limit: 3 }), 'nothing more').toBe(0);
      expect(await idsOf(store, job), 'running rows beyond keepLast are kept').toEqual(
        left(1, 3, 6, 7, 8, 9, 10, 11),
      );

      // before: started before second 8 (6 and 7; the running 1 and 3 stay).
      const before = rows[8]!.startedAt;
      expect(await pruneJob(job, { before, limit: 100 }), 'started before second 8').toBe(2);
      expect(await idsOf(store, job)).toEqual(left(1, 3, 8, 9, 10, 11));

      // both given, either bound prunes: before inside keepLast, then keepLast past before.
      const inside = { keepLast: 4, before: rows[9]!.startedAt, limit: 100 };
      expect(await pruneJob(job, inside), 'before prunes inside keepLast').toBe(1);
      expect(await idsOf(store, job)).toEqual(left(1, 3, 9, 10, 11));
      const past = { keepLast: 2, before: rows[0]!.startedAt, limit: 100 };
      expect(await pruneJob(job, past), 'keepLast prunes past before').toBe(1);
      expect(await idsOf(store, job)).toEqual(left(1, 3, 10, 11));

      // keepLast 0: every finished row may go; running ones never.
      expect(await pruneJob(job, { keepLast: 0, limit: 100 }), 'keepLast 0').toBe(2);
      expect(await idsOf(store, job), 'only running rows are left').toEqual(left(1, 3));

      for (const name of ['kee', 'keep:2', 'keep/x']) {
        expect(await idsOf(store, name), `${name} untouched`).toHaveLength(5);
      }
      expect((await store.getJobState(job)).lastStatus, 'job state survives').toBe('succeeded');

      // 150 rows, pairs sharing startedAt (ties by id): keep the newest 11, 99 per call (both
      // cuts fall inside a pair).
      const bulk: Execution[] = Array.from({ length: 150 }, (_, i) => ({
        ...execution('bulk', Math.floor(i / 2), 'failed'),
        error: 'boom',
      }));
      // within each pair the row recorded first gets the smaller id (newest first by
      // (startedAt, id), it comes second), so a store that breaks ties by insertion order
      // instead of by id prunes the wrong row of a cut pair (random ids agreed with insertion
      // order on both cut pairs in 1 of 4 runs, and such a store passed)
      for (let i = 0; i + 1 < bulk.length; i += 2) {
        const [first, second] = [bulk[i] as Execution, bulk[i + 1] as Execution];
        if (first.id > second.id) {
          bulk[i] = { ...first, id: second.id };
          bulk[i + 1] = { ...second, id: first.id };
        }
      }
      await recordAll(store, bulk);
      const newest = [...bulk].sort(compareNewestFirst).map((e) => e.id);
      expect(await pruneJob('bulk', { keepLast: 11, limit: 99 }), 'the first 99').toBe(99);
      expect(await idsOf(store, 'bulk'), 'the oldest 99 went').toEqual(newest.slice(0, 51));
      expect(await pruneJob('bulk', { keepLast: 11, limit: 99 }), 'the other 40').toBe(40);
      expect(await idsOf(store, 'bulk'), 'the newest 11 by (startedAt, id) are kept').toEqual(
        newest.slice(0, 11),
      );
    });
  },
};
