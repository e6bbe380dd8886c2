import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';

// A file made by the store before fleet control (issue 13) gains the new columns and tables.

const OLD_SCHEMA = `
CREATE TABLE fleetcron_executions (
  id TEXT PRIMARY KEY, job TEXT NOT NULL, fire_at INTEGER NOT NULL, status TEXT NOT NULL,
  attempt INTEGER NOT NULL, instance_id TEXT NOT NULL, token INTEGER, started_at INTEGER NOT NULL,
  finished_at INTEGER, error TEXT, reason TEXT
);
CREATE TABLE fleetcron_jobs (
  job TEXT PRIMARY KEY, paused INTEGER NOT NULL DEFAULT 0, last_status TEXT,
  last_fire_at INTEGER, last_finished_at INTEGER
) WITHOUT ROWID;
INSERT INTO fleetcron_jobs (job, paused) VALUES ('old', 1);
`;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('SqliteStore on a file made before fleet control', () => {
  it('adds the fleet columns and tables; old rows read with null who/when', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcron-store-upgrade-'));
    dirs.push(dir);
    const file = join(dir, 'old.db');
    const db = new Database(file);
    db.exec(OLD_SCHEMA);
    db.close();
    const stores = [new SqliteStore(file), new SqliteStore(file)];
    try {
      // Two stores open (and migrate) at once: neither fails on the other's ALTER TABLE.
      await Promise.all(stores.map((s) => s.open()));
      const [store] = stores;
      expect(await store!.getJobState('old')).toMatchObject({
        paused: true,
        pausedBy: null,
        pausedAt: null,
      });
      await store!.record({
        id: 'e1',
        job: 'old',
        fireAt: 1,
        status: 'succeeded',
        attempt: 1,
        instanceId: 'i',
        token: 1,
        startedAt: 2,
        finishedAt: 3,
        error: null,
        requestedBy: 'alice',
      });
      expect((await store!.history('old')).executions[0]?.requestedBy).toBe('alice');
      const request = await store!.requestRun({ job: 'old', requestedBy: 'cli' });
      expect(await stores[1]!.takeRunRequests(['old'], 'i')).toEqual([request]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});
