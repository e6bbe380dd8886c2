import type { ScheduleDefinition } from '@fleetcron/core';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import type { SqliteStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// The audit log on SQLite beyond the shared suite: the entry is appended in its mutation's
// transaction, so an entry SQLite refuses (a trigger the test adds) rolls the mutation back.

const def = (enabled = true): ScheduleDefinition => ({
  handler: 'report',
  trigger: { kind: 'every', ms: 60_000, anchor: 0 },
  data: null,
  enabled,
  options: {},
});

describe('SqliteStore audit log', () => {
  it('an entry SQLite refuses refuses its mutation: pause, run request and schedule write roll back', async () => {
    const fixture = await storeFixtures()();
    const db = new Database(fixture.file);
    try {
      const store = (await fixture.newStore()) as SqliteStore;
      await store.createSchedule('acme', def(), { by: 'alice' });
      db.exec(`CREATE TRIGGER no_boom BEFORE INSERT ON fleetcron_audit WHEN NEW.note = 'boom'
               BEGIN SELECT RAISE(ABORT, 'no boom'); END`);
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
      db.close();
      await fixture.close();
    }
  });

  it('a file made before the audit log gets its table at the next open; entries start then', async () => {
    const fixture = await storeFixtures()();
    try {
      const store = (await fixture.newStore()) as SqliteStore;
      await store.setPaused('billing', true, { by: 'alice' });
      await store.close();
      const db = new Database(fixture.file);
      db.exec('DROP TABLE fleetcron_audit');
      db.close();
      const reopened = (await fixture.newStore()) as SqliteStore;
      expect((await reopened.getJobState('billing')).paused, 'old state kept').toBe(true);
      expect((await reopened.listAudit()).entries).toEqual([]);
      await reopened.setPaused('billing', false, { by: 'bob', note: 'after upgrade' });
      expect((await reopened.listAudit()).entries).toMatchObject([
        { action: 'resume', by: 'bob', note: 'after upgrade' },
      ]);
    } finally {
      await fixture.close();
    }
  });
});
