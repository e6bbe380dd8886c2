import { randomUUID } from 'node:crypto';
import type { Execution, Store } from '@fleetcron/core';
import { TERMINAL_STATUSES } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreScenario } from '../types.js';
import { using } from '../util.js';

/** Executions whose terminal write races `running` writes in the race part of the scenario. */
const RACES = 200;
/** Most `running` writes one execution gets while its terminal write is in flight. */
const MAX_RACING_WRITES = 50;
const BASE = Date.UTC(2026, 0, 2);

/** A finished execution of `job`, `i` seconds after BASE, with a fresh UUID. */
function execution(job: string, i: number, overrides: Partial<Execution> = {}): Execution {
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

/** A job's whole history, page by page. */
async function readAll(store: Store, job: string): Promise<Execution[]> {
  const all: Execution[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.history(job, { limit: 100, cursor });
    all.push(...page.executions);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** The `running` row of a finished execution, as the scheduler first writes it. */
function startOf(done: Execution): Execution {
  return { ...done, status: 'running', finishedAt: null, error: null, reason: null };
}

/** What the store must show for `done`: its status, attempt, finish and error. */
function outcomeOf(e: Execution) {
  return {
    id: e.id,
    status: e.status,
    attempt: e.attempt,
    finishedAt: e.finishedAt,
    error: e.error,
  };
}

/**
 * Store scenario: the scheduler bounds each store write in time, so the `running` write of a fire
 * may land AFTER its terminal write. The store must drop it (the row and the job's last outcome
 * keep the terminal status), while `running` still replaces `running`, and a terminal write
 * racing a `running` write of the same id always ends terminal.
 */
export const lateRunningWrite: StoreScenario = {
  title: 'a late running write does not reopen a finished execution',
  timeoutMs: 60_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const store = await fixture.newStore();
      const other = await fixture.newStore();

      const retried = execution('late-retry', 0, { status: 'running', finishedAt: null });
      await store.record(retried);
      await store.record({ ...retried, attempt: 2 });
      expect(
        (await store.history('late-retry')).executions.map((e) => [e.status, e.attempt]),
        'a running write still replaces a running row',
      ).toEqual([['running', 2]]);

      for (const [i, status] of TERMINAL_STATUSES.entries()) {
        const job = `late-${status}`;
        const done = execution(job, i + 1, {
          status,
          attempt: 2,
          error: status === 'failed' ? 'Error: boom' : null,
        });
        await store.record(startOf(done));
        await store.record(done);
        await store.record(startOf(done));
        await expectFinished(store, done, `${status}: running, ${status}, then running again`);

        // The first `running` write never landed before the outcome: it lands only afterwards.
        const unseen = execution(job, i + 100, { status });
        await store.record(unseen);
        await store.record(startOf(unseen));
        await expectFinished(store, unseen, `${status}: ${status}, then a late first running`);
        expect(await readAll(store, job), `${job}: one row per execution`).toHaveLength(2);
      }

      const races = Array.from({ length: RACES }, (_, i) =>
        execution('late-race', 1000 + i, { status: i % 2 ? 'failed' : 'succeeded' }),
      );
      await Promise.all(races.map((done) => race(store, other, done)));
      const rows = await readAll(other, 'late-race');
      expect(
        rows.filter((e) => e.status === 'running').map((e) => e.id),
        'executions a racing running write reopened',
      ).toEqual([]);
      expect(
        rows.map(outcomeOf).sort((a, b) => (a.id < b.id ? -1 : 1)),
        'every raced execution keeps its terminal write',
      ).toEqual(races.map(outcomeOf).sort((a, b) => (a.id < b.id ? -1 : 1)));
    });
  },
};

/**
 * Records `done` through `other` while `store` keeps writing its `running` row, one write after
 * another, until the terminal write has returned: some `running` write straddles it.
 */
async function race(store: Store, other: Store, done: Execution): Promise<void> {
  let finished = false;
  const terminal = other.record(done).then(() => {
    finished = true;
  });
  for (let n = 0; n < MAX_RACING_WRITES && !finished; n++) await store.record(startOf(done));
  await terminal;
}

async function expectFinished(store: Store, done: Execution, what: string): Promise<void> {
  const rows = (await store.history(done.job, { limit: 100 })).executions;
  const row = rows.find((e) => e.id === done.id);
  expect(row && outcomeOf(row), `${what}: the row keeps its terminal status`).toEqual(
    outcomeOf(done),
  );
  expect(await store.getJobState(done.job), `${what}: the job's last outcome`).toMatchObject({
    lastStatus: done.status,
    lastFireAt: done.fireAt,
    lastFinishedAt: done.finishedAt,
  });
}
