import { randomUUID } from 'node:crypto';
import { type Execution, isFleetcronError, type RunStatus, type Store } from '@fleetcron/core';
import {
  boundErrorText,
  compareNewestFirst,
  DEFAULT_MAX_ERROR_LENGTH,
  TERMINAL_STATUSES,
} from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreConformanceOptions, StoreScenario } from '../types.js';
import { using } from '../util.js';
import { firstOutcomeWins } from './first-outcome-scenario.js';
import { fleetClientView } from './fleet-client-scenario.js';
import { fleetStoreScenarios } from './fleet-scenarios.js';
import { jobStatesAsJobState } from './job-states-scenario.js';
import { lateRunningWrite } from './late-running-scenario.js';
import { pruneJobBounded } from './prune-job-scenario.js';
import { recordManyAsRecord, recordManyMatchesRecord } from './record-many-scenario.js';
import { runRequestStoreScenarios } from './run-request-scenarios.js';
import { shardKept } from './shard-scenario.js';

const BASE = Date.UTC(2026, 0, 1);
const ALL_STATUSES: RunStatus[] = ['running', ...TERMINAL_STATUSES];

/** A finished execution of `job`, `i` seconds after BASE, with a fresh UUID. */
export function execution(job: string, i: number, overrides: Partial<Execution> = {}): Execution {
  const fireAt = BASE + i * 1000;
  return {
    id: randomUUID(),
    job,
    fireAt,
    status: 'succeeded',
    attempt: 1,
    instanceId: 'instance-1',
    token: i + 1,
    startedAt: fireAt + 5,
    finishedAt: fireAt + 50,
    error: null,
    reason: null,
    ...overrides,
  };
}

/** The execution as every store must give it back (`reason` absent and `null` are the same). */
function normal(e: Execution): Execution {
  return { ...e, reason: e.reason ?? null, requestedBy: e.requestedBy ?? null };
}

/** Reads a job's whole history, page by page. */
export async function readAll(store: Store, job: string, limit = 100): Promise<Execution[]> {
  const all: Execution[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10_000; page++) {
    const result = await store.history(job, { limit, cursor });
    all.push(...result.executions);
    cursor = result.nextCursor;
    if (!cursor) return all;
  }
  throw new Error(`history(${job}) never ended`);
}

async function withStore(
  options: StoreConformanceOptions,
  body: (store: Store, other: () => Promise<Store>) => Promise<void>,
): Promise<void> {
  await using(options.create, async (fixture) => {
    await body(await fixture.newStore(), () => fixture.newStore());
  });
}

/** Store scenario 1: `create()` gives fresh, isolated namespaces. */
export const freshIsolatedStores: StoreScenario = {
  title: 'create() gives fresh isolated instances',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (first) => {
      await using(options.create, async (second) => {
        const a = await first.newStore();
        const b = await second.newStore();
        expect(typeof a.backend).toBe('string');
        expect((await a.history('job')).executions, 'a fresh namespace holds nothing').toEqual([]);
        await a.record(execution('job', 1));
        await a.setPaused('job', true);
        expect((await a.history('job')).executions).toHaveLength(1);
        expect((await b.history('job')).executions, 'another fixture sees nothing').toEqual([]);
        expect(await b.getJobState('job')).toEqual({
          job: 'job',
          paused: false,
          pausedBy: null,
          pausedAt: null,
          lastStatus: null,
          lastFireAt: null,
          lastFinishedAt: null,
        });
      });
    });
  },
};

/** Store scenario 2: a run's lifecycle (upsert by id) and every status round-trip. */
export const lifecycleAndStatuses: StoreScenario = {
  title: 'run lifecycle: running then finished upserts by id; every status round-trips',
  timeoutMs: 30_000,
  async run(options) {
    await withStore(options, async (store) => {
      const job = 'lifecycle';
      expect(await store.getJobState(job), 'an unknown job').toEqual({
        job,
        paused: false,
        pausedBy: null,
        pausedAt: null,
        lastStatus: null,
        lastFireAt: null,
        lastFinishedAt: null,
      });
      const running = execution(job, 1, { status: 'running', finishedAt: null });
      await store.record(running);
      expect((await store.history(job)).executions.map(normal)).toEqual([normal(running)]);
      expect((await store.getJobState(job)).lastStatus, 'running is not terminal').toBeNull();

      const done = {
        ...running,
        status: 'failed' as const,
        attempt: 3,
        finishedAt: running.startedAt + 99,
        error: 'boom',
      };
      await store.record(done);
      expect(
        (await store.history(job)).executions.map(normal),
        'recording the same id updates it',
      ).toEqual([normal(done)]);
      expect(await store.getJobState(job)).toEqual({
        job,
        paused: false,
        pausedBy: null,
        pausedAt: null,
        lastStatus: 'failed',
        lastFireAt: done.fireAt,
        lastFinishedAt: done.finishedAt,
      });

      for (const [i, status] of ALL_STATUSES.entries()) {
        const statusJob = `status-${status}`;
        const e = execution(statusJob, 10 + i, {
          status,
          finishedAt: status === 'running' ? null : BASE + 100_000 + i,
          token: status === 'skipped' ? null : 1000 + i,
          reason: status === 'skipped' ? 'overlap' : null,
          error: status === 'failed' ? 'Error: failed\n    at job (file.ts:1:1)' : null,
          instanceId: `instance ${status} ✓`,
        });
        await store.record(e);
        expect((await store.history(statusJob)).executions.map(normal), status).toEqual([
          normal(e),
        ]);
        const state = await store.getJobState(statusJob);
        if (status === 'running') expect(state.lastStatus).toBeNull();
        else
          expect(state, status).toMatchObject({
            lastStatus: status,
            lastFireAt: e.fireAt,
            lastFinishedAt: e.finishedAt,
          });
      }
    });
  },
};

/** Store scenario 3: history is newest first, paged by an opaque cursor. */
export const historyPagination: StoreScenario = {
  title: 'history is newest first by (startedAt, id) with cursor pagination: 25 → 10, 10, 5',
  timeoutMs: 30_000,
  async run(options) {
    await withStore(options, async (store) => {
      const job = 'paged';
      // 25 executions; pairs share a startedAt so ties are ordered by id.
      const all = Array.from({ length: 25 }, (_, i) =>
        execution(job, i, { startedAt: BASE + Math.floor(i / 2) * 1000 }),
      );
      for (const e of [...all].reverse()) await store.record(e);
      const expected = [...all].sort(compareNewestFirst).map((e) => e.id);

      const sizes: number[] = [];
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await store.history(job, { limit: 10, cursor });
        sizes.push(page.executions.length);
        ids.push(...page.executions.map((e) => e.id));
        cursor = page.nextCursor;
        expect(sizes.length, 'pagination ends').toBeLessThanOrEqual(3);
      } while (cursor);
      expect(sizes).toEqual([10, 10, 5]);
      expect(new Set(ids).size, 'no duplicates across pages').toBe(25);
      expect(ids, 'newest first by startedAt desc, then id desc').toEqual(expected);
      const whole = await store.history(job);
      expect(
        whole.executions.map((e) => e.id),
        'the default page holds 50',
      ).toEqual(expected);
      expect(whole.nextCursor).toBeNull();
      const exact = await store.history(job, { limit: 25 });
      expect(exact.nextCursor, 'no cursor when the page ends the history').toBeNull();
    });
  },
};

/** Store scenario 4: jobs are isolated, whatever their names. */
export const perJobIsolation: StoreScenario = {
  title: 'history and job state are per job (names that prefix each other, unicode)',
  timeoutMs: 30_000,
  async run(options) {
    await withStore(options, async (store) => {
      const jobs = ['job', 'job:1', 'job/1', 'job%', 'JOB', 'работа 🚀 仕事', 'x'.repeat(512)];
      for (const [i, job] of jobs.entries()) {
        for (let n = 0; n <= i; n++) await store.record(execution(job, n));
      }
      await store.setPaused('job', true);
      for (const [i, job] of jobs.entries()) {
        const history = await readAll(store, job);
        expect(history, `history(${JSON.stringify(job)})`).toHaveLength(i + 1);
        for (const e of history) expect(e.job).toBe(job);
        expect((await store.getJobState(job)).paused, job).toBe(job === 'job');
      }
    });
  },
};

/** Store scenario 5: prune deletes executions that started before a time, across jobs. */
export const pruneByAge: StoreScenario = {
  title: 'prune(before) deletes exactly the executions that started before, across jobs',
  timeoutMs: 30_000,
  async run(options) {
    await withStore(options, async (store) => {
      const jobs = ['prune-a', 'prune-b'];
      for (const job of jobs) for (let i = 0; i < 10; i++) await store.record(execution(job, i));
      const before = BASE + 5 * 1000 + 5; // startedAt of i = 5: kept (strictly before is pruned)
      expect(await store.prune(before)).toBe(10);
      for (const job of jobs) {
        const left = await readAll(store, job);
        expect(left.map((e) => e.startedAt).sort()).toEqual(
          Array.from({ length: 5 }, (_, k) => BASE + (k + 5) * 1000 + 5),
        );
      }
      expect(await store.prune(before), 'pruning again removes nothing').toBe(0);
      expect((await store.getJobState('prune-a')).lastStatus, 'job state survives').toBe(
        'succeeded',
      );
    });
  },
};

/** Store scenario 6: what one client writes, another client reads. */
export const sharedJobState: StoreScenario = {
  title: 'job state and history written by one store client are seen by another',
  timeoutMs: 30_000,
  async run(options) {
    await withStore(options, async (one, newStore) => {
      const two = await newStore();
      const job = 'shared';
      await one.setPaused(job, true);
      expect((await two.getJobState(job)).paused).toBe(true);
      await two.setPaused(job, false);
      expect((await one.getJobState(job)).paused).toBe(false);
      const e = execution(job, 1, { status: 'timed_out' });
      await one.record(e);
      expect((await two.history(job)).executions.map(normal)).toEqual([normal(e)]);
      expect(await two.getJobState(job)).toEqual({
        job,
        paused: false,
        pausedBy: null,
        pausedAt: null,
        lastStatus: 'timed_out',
        lastFireAt: e.fireAt,
        lastFinishedAt: e.finishedAt,
      });
    });
  },
};

/** Store scenario 7: concurrent writers on separate clients lose nothing. */
export const concurrentWriters: StoreScenario = {
  title: 'concurrent writers: 4 clients × 50 records, all present',
  timeoutMs: 60_000,
  async run(options) {
    await withStore(options, async (first, newStore) => {
      const stores = [first, await newStore(), await newStore(), await newStore()];
      const job = 'concurrent';
      const written = await Promise.all(
        stores.map(async (store, s) => {
          const ids: string[] = [];
          await Promise.all(
            Array.from({ length: 50 }, async (_, i) => {
              const e = execution(job, s * 50 + i, { instanceId: `writer-${s}` });
              ids.push(e.id);
              await store.record(e);
            }),
          );
          return ids;
        }),
      );
      const read = await readAll(first, job, 64);
      expect(read).toHaveLength(200);
      expect(new Set(read.map((e) => e.id))).toEqual(new Set(written.flat()));
    });
  },
};

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Store scenario 8: long and unicode error text is bounded, never split inside a character. */
export const errorTextBounded: StoreScenario = {
  title: 'a 64 KB unicode error is stored bounded to maxErrorLength with surrogate pairs intact',
  timeoutMs: 30_000,
  async run(options) {
    const max = options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH;
    await withStore(options, async (store) => {
      const short = 'Error: 失败 😀 — ñ\n\tat 𝔣(x)';
      const texts = [
        short,
        '😀'.repeat(32 * 1024), // 64 KB of UTF-16, every other unit a high surrogate
        `x${'😀'.repeat(32 * 1024)}`, // the other alignment
        '中文错误信息'.repeat(11_000),
      ];
      for (const [i, text] of texts.entries()) {
        const job = `errors-${i}`;
        await store.record(execution(job, i, { status: 'failed', error: text }));
        const [stored] = (await store.history(job)).executions;
        expect(stored?.error, `error ${i} is stored as boundErrorText(text, ${max})`).toBe(
          boundErrorText(text, max),
        );
        expect(stored!.error!.length).toBeLessThanOrEqual(max);
        expect(LONE_SURROGATE.test(stored!.error!), `error ${i}: no split surrogate pair`).toBe(
          false,
        );
      }
    });
  },
};

/** Store scenario 9: a cursor the store did not make, or a bad page size, is a typed error. */
export const badQueryTyped: StoreScenario = {
  title: 'a bad cursor or page size is a typed INVALID_OPTION error',
  timeoutMs: 30_000,
  async run(options) {
    await withStore(options, async (store) => {
      await store.record(execution('cursor', 1));
      const garbage = [
        'not a cursor!',
        Buffer.from('{"a":1}').toString('base64url'),
        Buffer.from('[1]').toString('base64url'),
      ];
      for (const cursor of garbage) {
        const error = await store.history('cursor', { cursor }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(
          isFleetcronError(error, 'INVALID_OPTION'),
          `cursor ${cursor}: ${String(error)}`,
        ).toBe(true);
      }
      for (const limit of [0, -1, 1.5]) {
        const error = await store.history('cursor', { limit }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(isFleetcronError(error, 'INVALID_OPTION'), `limit ${limit}: ${String(error)}`).toBe(
          true,
        );
      }
    });
  },
};

/** Every store scenario, in the order `runStoreConformance` registers them. */
export const storeScenarios = {
  freshIsolatedStores,
  lifecycleAndStatuses,
  historyPagination,
  perJobIsolation,
  pruneByAge,
  pruneJobBounded,
  sharedJobState,
  concurrentWriters,
  lateRunningWrite,
  firstOutcomeWins,
  recordManyAsRecord,
  recordManyMatchesRecord,
  jobStatesAsJobState,
  shardKept,
  errorTextBounded,
  badQueryTyped,
  ...fleetStoreScenarios,
  ...runRequestStoreScenarios,
  fleetClientView,
} as const satisfies Record<string, StoreScenario>;

/** Name of a store scenario. */
export type StoreScenarioName = keyof typeof storeScenarios;
