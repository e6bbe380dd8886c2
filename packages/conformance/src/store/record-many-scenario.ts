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
      expect(
        await rows(store, job),
        'starts and outcomes in one batch, a second outcome dropped (the first outcome wins)',
      ).toEqual([
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
      // the dropped write is the batch's last terminal one: the job keeps the accepted outcome
      await store.recordMany([execution(job, 5, 'succeeded'), { ...a, status: 'timed_out' }]);
      expect(
        await store.getJobState(job),
        'a dropped second outcome at the end of a batch leaves the job last outcome alone',
      ).toMatchObject({ lastStatus: 'succeeded', lastFireAt: BASE + 5000 });
      // an outcome, then a late start of the same id, in one batch: the start is dropped
      const c = execution(job, 6, 'failed');
      await store.recordMany([c, { ...c, status: 'running', finishedAt: null, error: null }]);
      expect(
        (await store.history(job, { limit: 100 })).executions.find((e) => e.id === c.id)?.status,
        'an outcome, then a late start of the same id in one batch: the first outcome wins',
      ).toBe('failed');
      expect((await store.getJobState(job)).lastStatus).toBe('failed');
      // startedAt moved between the start and the outcome, across batches and inside one batch
      const moved = execution(job, 7, 'running');
      await store.recordMany([moved]);
      const inBatch = execution(job, 8, 'running');
      await store.recordMany([
        { ...moved, status: 'succeeded', startedAt: moved.startedAt + 7, finishedAt: BASE + 7060 },
        inBatch,
        {
          ...inBatch,
          status: 'succeeded',
          startedAt: inBatch.startedAt + 7,
          finishedAt: BASE + 8060,
        },
      ]);
      const byId = new Map(
        (await store.history(job, { limit: 100 })).executions.map((e) => [e.id, e]),
      );
      expect(byId.size, 'a moved startedAt leaves one row per id').toBe(8);
      expect(byId.get(moved.id)?.startedAt, 'moved across batches').toBe(moved.startedAt + 7);
      expect(byId.get(inBatch.id)?.startedAt, 'moved inside one batch').toBe(inBatch.startedAt + 7);
      // a bad execution anywhere in the batch: rejected as record rejects it, nothing written
      const early = execution('record-many-bad', 1, 'succeeded');
      await expect(
        store.recordMany([
          early,
          { ...execution('record-many-bad', 2, 'succeeded'), shard: { index: 3, count: 3 } },
        ]),
        'a batch with a bad shard',
      ).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'shard' });
      expect(
        (await store.history('record-many-bad')).executions,
        'a batch that failed its checks wrote nothing',
      ).toEqual([]);
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

/** A deterministic pseudo-random sequence (mulberry32), so a failure replays the same way. */
function seeded(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const OUTCOMES: Execution['status'][] = [
  'succeeded',
  'failed',
  'timed_out',
  'lease_lost',
  'skipped',
];

/** How many of the newest executions the later writes of {@link writeSequence} pick from. */
const RECENT = 10;

/**
 * The writes of a scheduler fleet, jumbled: starts, outcomes, second outcomes, late starts,
 * restarts with a moved `startedAt`, skips, over `jobs` jobs. Ids are `<n>` (zero-padded, so
 * both namespaces order ties alike); the caller prefixes them.
 */
function writeSequence(random: () => number, jobs: number, length: number): Execution[] {
  const out: Execution[] = [];
  const known: Execution[] = [];
  for (let n = 0; out.length < length; n++) {
    const pick = random();
    // later writes go to one of the RECENT executions (as a scheduler's do), so a store whose
    // history bound is at least RECENT never trims a row between two writes of it
    const recent = known.slice(-RECENT);
    const old = recent.length > 0 ? recent[Math.floor(random() * recent.length)]! : null;
    const status = OUTCOMES[Math.floor(random() * OUTCOMES.length)]!;
    if (old && pick < 0.45) {
      // an outcome (or a second one) of an execution seen before, maybe with a moved startedAt
      const startedAt = old.startedAt + (random() < 0.2 ? 3 : 0);
      out.push({ ...old, status, startedAt, finishedAt: startedAt + 40, error: `e${n}` });
    } else if (old && pick < 0.55) {
      out.push({ ...old, status: 'running', finishedAt: null, error: null }); // a late start
    } else {
      const job = `j${Math.floor(random() * jobs)}`;
      const e = execution(
        job,
        n,
        random() < 0.15 ? 'skipped' : 'running',
        String(n).padStart(6, '0'),
      );
      known.push(e);
      out.push(e);
    }
  }
  return out;
}

/**
 * Store scenario: `recordMany` and `record` agree on a jumbled fleet's writes. The same sequence
 * is written twice in one namespace: with `record`, one by one, under jobs `single-*`, and with
 * `recordMany` in batches of 1 to 80 under jobs `batch-*`; every job's history and state must
 * read back the same. Adapters also run it with a small history bound (`maxHistory` >=
 * {@link RECENT}), where the trims of a batch must equal those of single records. (Below that, a
 * row trimmed away between two writes of it is written again by the second `record`, as new; a
 * batch may instead drop that second write, by the first-outcome rule.)
 */
export const recordManyMatchesRecord: StoreScenario = {
  title: 'recordMany (when present) and record agree on a jumbled sequence of writes',
  timeoutMs: 120_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const store = await fixture.newStore();
      if (store.recordMany === undefined) {
        expect(store.recordMany, 'a store without recordMany').toBeUndefined();
        return;
      }
      const random = seeded(20_260_104);
      const jobs = 6;
      const sequence = writeSequence(random, jobs, 400);
      const as = (ns: 'single' | 'batch', e: Execution): Execution => ({
        ...e,
        id: `${ns}-${e.id}`,
        job: `${ns}-${e.job}`,
      });
      for (const e of sequence) await store.record(as('single', e));
      for (let i = 0; i < sequence.length; ) {
        const size = 1 + Math.floor(random() * 80);
        await store.recordMany(sequence.slice(i, i + size).map((e) => as('batch', e)));
        i += size;
      }
      for (let j = 0; j < jobs; j++) {
        const strip = (e: Execution) => ({
          ...e,
          id: e.id.slice(e.id.indexOf('-') + 1),
          job: `j${j}`,
        });
        const single = (await readAllOf(store, `single-j${j}`)).map(strip);
        const batch = (await readAllOf(store, `batch-j${j}`)).map(strip);
        expect(batch, `job j${j}: history written by recordMany equals record's`).toEqual(single);
        const { job: _s, ...singleState } = await store.getJobState(`single-j${j}`);
        const { job: _b, ...batchState } = await store.getJobState(`batch-j${j}`);
        expect(batchState, `job j${j}: state written by recordMany equals record's`).toEqual(
          singleState,
        );
      }
    });
  },
};

/** A job's whole history, newest first, page by page. */
async function readAllOf(store: Store, job: string): Promise<Execution[]> {
  const all: Execution[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.history(job, { limit: 100, cursor });
    all.push(...page.executions);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}
