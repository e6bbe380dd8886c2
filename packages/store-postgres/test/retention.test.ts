import {
  type Execution,
  historyRetention,
  MemoryLock,
  type RetentionReport,
  Scheduler,
} from '@fleetcron/core';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { storeFixtures } from './fixture.js';

// The retention job on a real PostgreSQL: a run brings every job within its bounds, and keeps
// them there as history grows (the store's pruneJob statement under the scheduler's job).

const create = storeFixtures(postgresDatabase());
const DAY = 86_400_000;
const NAME = 'fleetcron.history-retention';

/** `count` executions of `job`, one a minute, the newest `newestAgoMs` ago. */
function executions(job: string, count: number, newestAgoMs: number, from = 0): Execution[] {
  const newest = Date.now() - newestAgoMs;
  return Array.from({ length: count }, (_, i) => {
    const startedAt = newest - (count - 1 - i) * 60_000;
    return {
      ...{ id: `${job}-${from + i}`, job, fireAt: startedAt, status: 'succeeded' as const },
      ...{ attempt: 1, instanceId: 'seed', token: i + 1, startedAt, finishedAt: startedAt + 5 },
      ...{ error: null, reason: null },
    };
  });
}

describe('historyRetention on PostgreSQL', () => {
  it('one run keeps each job to keepLast and maxAgeMs; runs keep the bound as history grows', async () => {
    const fixture = await create();
    try {
      const store = await fixture.newStore();
      const write = async (rows: Execution[]) => {
        for (let i = 0; i < rows.length; i += 256) await store.recordMany!(rows.slice(i, i + 256));
      };
      const jobs = ['billing', 'export', 'reports'];
      for (const job of jobs) await write(executions(job, 1500, 60_000));
      await write(executions('stale', 200, 3 * DAY)); // all older than maxAgeMs
      await write(executions('small', 20, 60_000)); // within both bounds

      const reports: RetentionReport[] = [];
      const scheduler = new Scheduler({ lock: new MemoryLock(), store, instanceId: 'pg-test' });
      scheduler.add(
        historyRetention({
          store,
          keepLast: 1000,
          maxAgeMs: 2 * DAY,
          every: DAY,
          rowsPerCall: 500,
          onReport: (report) => reports.push(report),
        }),
      );
      scheduler.start();
      try {
        const counts = async () => {
          const { rows } = await fixture.admin.query<{ job: string; n: string }>(
            `SELECT job, count(*) AS n FROM "${fixture.schema}".fleetcron_executions
             WHERE job <> $1 GROUP BY job ORDER BY job`,
            [NAME],
          );
          return Object.fromEntries(rows.map((r) => [r.job, Number(r.n)]));
        };
        expect(await counts()).toEqual({
          billing: 1500,
          export: 1500,
          reports: 1500,
          small: 20,
          stale: 200,
        });

        expect((await scheduler.trigger(NAME)).status).toBe('succeeded');
        expect(reports[0]).toMatchObject({ deleted: 3 * 500 + 200, stoppedBy: 'done' });
        expect(await counts()).toEqual({ billing: 1000, export: 1000, reports: 1000, small: 20 });
        const kept = await store.history('billing', { limit: 1000 });
        expect(
          kept.executions.map((e) => e.id),
          'the newest 1000 are kept',
        ).toEqual(Array.from({ length: 1000 }, (_, i) => `billing-${1499 - i}`));

        // 300 more per job: the next run takes the oldest 300 of each, and the bound holds.
        for (const job of jobs) await write(executions(job, 300, 0, 1500));
        expect((await scheduler.trigger(NAME)).status).toBe('succeeded');
        expect(reports[1]).toMatchObject({ deleted: 900, stoppedBy: 'done' });
        expect(await counts()).toEqual({ billing: 1000, export: 1000, reports: 1000, small: 20 });
      } finally {
        await scheduler.stop();
      }
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
