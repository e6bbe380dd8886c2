import type { ScheduleDefinition } from '@fleetcron/core';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// The audit log on PostgreSQL beyond the shared suite: the entry and its mutation are one
// statement, so a refused entry (a CHECK the test adds to the audit table) refuses the mutation
// too, and a `by` holding NUL is kept as given.

const create = storeFixtures(postgresDatabase());

const def = (enabled = true): ScheduleDefinition => ({
  handler: 'report',
  trigger: { kind: 'every', ms: 60_000, anchor: 0 },
  data: null,
  enabled,
  options: {},
});

describe('PostgresStore audit log', () => {
  it('an entry the database refuses refuses its mutation: pause, run request and schedule write roll back', async () => {
    const fixture = await create();
    try {
      const store = (await fixture.newStore()) as PostgresStore;
      await store.createSchedule('acme', def(), { by: 'alice' });
      await fixture.admin.query(
        `ALTER TABLE "${fixture.schema}".fleetcron_audit ADD CONSTRAINT no_boom CHECK (note IS DISTINCT FROM 'boom')`,
      );
      await expect(store.setPaused('billing', true, { by: 'bob', note: 'boom' })).rejects.toThrow();
      expect((await store.getJobState('billing')).paused, 'the pause rolled back').toBe(false);
      await expect(
        store.requestRun({ job: 'billing', requestedBy: 'bob', note: 'boom' }),
      ).rejects.toThrow();
      expect(await store.takeRunRequests(['billing'], 'i-1'), 'no request stored').toEqual([]);
      await expect(
        store.replaceSchedule('acme', def(false), { by: 'bob', note: 'boom', expectedVersion: 1 }),
      ).rejects.toThrow();
      expect((await store.getSchedule('acme'))?.version, 'the schedule kept version 1').toBe(1);
      expect((await store.listAudit()).entries.map((e) => e.action)).toEqual(['schedule.create']);
      await store.setPaused('billing', true, { by: 'bob', note: 'fine' });
      expect((await store.getJobState('billing')).paused).toBe(true);
    } finally {
      await fixture.close();
    }
  });

  it('keeps a by holding NUL, quotes and unicode as given; the job name likewise', async () => {
    const fixture = await create();
    try {
      const store = (await fixture.newStore()) as PostgresStore;
      const job = 'job\u0000 "x" 🚀';
      await store.setPaused(job, true, { by: 'alice\u0000 "x"' });
      const [entry] = (await store.listAudit({ job })).entries;
      expect(entry).toMatchObject({ action: 'pause', job, by: 'alice\u0000 "x"' });
      expect((await store.getJobState(job)).pausedBy).toBe('alice\u0000 "x"');
    } finally {
      await fixture.close();
    }
  });
});
