import { randomUUID } from 'node:crypto';
import type { Execution, RunStatus, Store } from '@fleetcron/core';
import { TERMINAL_STATUSES } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreScenario } from '../types.js';
import { using } from '../util.js';

/** Executions whose two different outcomes are written at the same time, through two clients. */
const RACES = 40;
const BASE = Date.UTC(2026, 0, 3);

/** A finished execution of `job`, `i` seconds after BASE, with a fresh UUID. */
function execution(job: string, i: number, overrides: Partial<Execution> = {}): Execution {
  const fireAt = BASE + i * 1000;
  return {
    ...{ id: randomUUID(), job, fireAt, status: 'succeeded' as const, attempt: 1 },
    ...{ instanceId: 'instance-1', token: i + 1, startedAt: fireAt + 5, finishedAt: fireAt + 50 },
    ...{ error: null, reason: null },
    ...overrides,
  };
}

/** The `running` row of a finished execution, as the scheduler first writes it. */
function startOf(done: Execution): Execution {
  return { ...done, status: 'running', finishedAt: null, error: null, reason: null };
}

/** `done` finished differently: the holder-lost sweep's `lease_lost`, noticed later. */
function otherOutcome(done: Execution, status: RunStatus): Execution {
  const finishedAt = (done.finishedAt ?? done.startedAt) + 1_000;
  return { ...done, status, finishedAt, error: `lost (instead of ${done.status})`, attempt: 9 };
}

/** What the store must keep of an execution's outcome. */
function outcomeOf(e: Execution) {
  const { id, status, attempt, finishedAt, error } = e;
  return { id, status, attempt, finishedAt, error };
}

async function rowOf(store: Store, done: Execution): Promise<Execution | undefined> {
  const rows = (await store.history(done.job, { limit: 100 })).executions;
  return rows.find((e) => e.id === done.id);
}

/** The row and the job's last outcome still show `done`. */
async function expectKept(store: Store, done: Execution, what: string): Promise<void> {
  const row = await rowOf(store, done);
  expect(row && outcomeOf(row), `${what}: the first outcome wins (the row)`).toEqual(
    outcomeOf(done),
  );
  expect(
    await store.getJobState(done.job),
    `${what}: the first outcome wins (job state)`,
  ).toMatchObject({
    lastStatus: done.status,
    lastFireAt: done.fireAt,
    lastFinishedAt: done.finishedAt,
  });
}

/**
 * Store scenario: once an execution is terminal, no later write changes it. The first terminal
 * status wins, atomically: the holder-lost sweep of another instance may write `lease_lost` for
 * a run whose own `succeeded` landed just before (or at the same moment), and that write must be
 * dropped, row and job state alike. A `running` row still takes its outcome.
 */
export const firstOutcomeWins: StoreScenario = {
  title: 'the first terminal status of an execution wins',
  timeoutMs: 60_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const store = await fixture.newStore();
      const other = await fixture.newStore();

      for (const [i, status] of TERMINAL_STATUSES.entries()) {
        const second = TERMINAL_STATUSES[(i + 1) % TERMINAL_STATUSES.length] as RunStatus;
        const job = `first-${status}`;
        const done = execution(job, i + 1, { status, error: `first: ${status}` });
        await store.record(startOf(done));
        await store.record(done);
        await other.record(otherOutcome(done, second));
        await expectKept(store, done, `${status} then ${second}`);
        await store.record(otherOutcome(done, 'lease_lost'));
        await expectKept(other, done, `${status} then lease_lost`);

        // never written `running` (its start write was lost): the outcome is still final
        const direct = execution(job, i + 100, { status });
        await store.record(direct);
        await other.record(otherOutcome(direct, second));
        await expectKept(store, direct, `${status} (no running row) then ${second}`);
      }

      await Promise.all(Array.from({ length: RACES }, (_, i) => race(store, other, i)));
    });
  },
};

/**
 * One execution finishes `succeeded` through `store` while `other` writes `lease_lost` for it at
 * the same time: either may win, but the row and the job's last outcome agree, and a later write
 * of the loser changes nothing.
 */
async function race(store: Store, other: Store, i: number): Promise<void> {
  const job = `first-race-${i}`;
  const done = execution(job, 1000 + i, { status: 'succeeded' });
  const lost = otherOutcome(done, 'lease_lost');
  await store.record(startOf(done));
  await Promise.all([store.record(done), other.record(lost)]);
  const row = await rowOf(other, done);
  const winner = row?.status === 'succeeded' ? done : lost;
  expect(row && outcomeOf(row), `${job}: the row is one of the two outcomes, whole`).toEqual(
    outcomeOf(winner),
  );
  await expectKept(store, winner, `${job}: raced`);
  await store.record(winner === done ? lost : done);
  await expectKept(other, winner, `${job}: the loser written again`);
}
