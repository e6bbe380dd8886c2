import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterEach, describe, expect, it } from 'vitest';
import { SQLITE_STORE_SCHEMA, SqliteStore } from '../src/index.js';

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
      expect(await stores[1]!.takeRunRequests(['old'], 'i')).toMatchObject([request]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});

// The fleet tables as the first fleet-control version made them (run requests deleted when
// taken, no data): a request stored then is taken, decided and read after the upgrade.
const FLEET_V1_SCHEMA = `
${SQLITE_STORE_SCHEMA}
CREATE TABLE fleetcron_instances (
  instance_id TEXT PRIMARY KEY, record TEXT NOT NULL, heartbeat_ms INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE fleetcron_run_requests (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, job TEXT NOT NULL,
  requested_by TEXT NOT NULL, requested_at INTEGER NOT NULL
);
CREATE INDEX fleetcron_run_requests_job ON fleetcron_run_requests (job, seq);
INSERT INTO fleetcron_run_requests (id, job, requested_by, requested_at)
  VALUES ('before-upgrade', 'old', 'alice', 1700000000000);
`;

describe('SqliteStore on a file made before exactly-once run requests', () => {
  it('a request stored before the upgrade is taken as pending, decided once and read back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcron-store-upgrade-'));
    dirs.push(dir);
    const file = join(dir, 'fleet-v1.db');
    const db = new Database(file);
    db.exec(FLEET_V1_SCHEMA);
    db.close();
    const stores = [new SqliteStore(file), new SqliteStore(file)];
    try {
      // Two stores open (and migrate) at once: neither fails on the other's ALTER TABLE.
      await Promise.all(stores.map((s) => s.open()));
      const [one, two] = stores as [SqliteStore, SqliteStore];
      const old = { id: 'before-upgrade', job: 'old', requestedBy: 'alice' };
      expect(await two.getRunRequest('before-upgrade')).toMatchObject({
        ...{ ...old, requestedAt: 1_700_000_000_000, data: null, state: 'pending', takes: 0 },
        ...{ takenBy: null, takenUntil: null, decidedAt: null, fireAt: null, decidedBy: null },
      });
      const newer = await two.requestRun({ job: 'old', requestedBy: 'bob', data: { x: 1 } });
      const taken = await one.takeRunRequests(['old'], 'i');
      expect(taken, 'oldest first, the old one as pending').toMatchObject([
        { ...old, data: null, takes: 1 },
        { ...newer, takes: 1 },
      ]);
      expect(await two.takeRunRequests(['old'], 'j'), 'held by the take').toEqual([]);
      const decision = { fireAt: 1_700_000_000_500, instanceId: 'i' };
      expect(await two.decideRunRequest('before-upgrade', taken[0]!.takeId, decision)).toBe(true);
      expect(await two.getRunRequest('before-upgrade')).toMatchObject({
        ...{ state: 'decided', takes: 1, takenBy: 'i', fireAt: decision.fireAt, decidedBy: 'i' },
      });
      const check = new Database(file);
      try {
        const indexes = check
          .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?")
          .all('fleetcron_run_requests') as { name: string }[];
        expect(indexes.map((i) => i.name).sort(), 'the run-request indexes').toEqual(
          expect.arrayContaining(['fleetcron_run_requests_decided', 'fleetcron_run_requests_open']),
        );
      } finally {
        check.close();
      }
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});
