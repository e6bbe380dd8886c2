/**
 * The fleet-control operations of the SQLite store (registry, job listing; run requests are in
 * `run-request-operations.ts`), run on the store's connection like the others. One host, one
 * clock: `lastSeenAt` and `pausedAt` are the host's clock (`Date.now()` in the connection's
 * thread). Only type imports from outside, and `statementCache` from its own entry: the worker
 * thread loads this file by URL.
 */
import type { InstanceRecord, JobState, LiveInstance, RunStatus } from '@fleetcron/core';
import type { SqliteDatabase } from '@fleetcron/sqlite-shared';
import { statementCache } from '@fleetcron/sqlite-shared/statement-cache';
import { FLEET_COLUMNS, SQLITE_FLEET_SCHEMA, SQLITE_RUN_REQUEST_INDEXES } from './schema.js';

/**
 * Adds the fleet tables, the fleet columns to tables made before them, and the run-request
 * indexes (which name added columns), in one transaction.
 */
export function migrateFleet(db: SqliteDatabase): void {
  db.transaction(() => {
    db.exec(SQLITE_FLEET_SCHEMA);
    for (const [table, column, type] of FLEET_COLUMNS) {
      const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
      if (!columns.some((c) => c.name === column)) {
        db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
      }
    }
    db.exec(SQLITE_RUN_REQUEST_INDEXES);
  }).immediate();
}

interface JobRow {
  job: string;
  paused: number;
  paused_by: string | null;
  paused_at: number | null;
  last_status: RunStatus | null;
  last_fire_at: number | null;
  last_finished_at: number | null;
}

/** A jobs-table row as a JobState. */
export function toJobState(job: string, row: Omit<JobRow, 'job'> | undefined): JobState {
  return {
    job,
    paused: row?.paused === 1,
    pausedBy: row?.paused_by ?? null,
    pausedAt: row?.paused_at ?? null,
    lastStatus: row?.last_status ?? null,
    lastFireAt: row?.last_fire_at ?? null,
    lastFinishedAt: row?.last_finished_at ?? null,
  };
}

/** Expiry condition of an instance row at `@now` (unseen for 3 heartbeats). */
const EXPIRED = 'last_seen_at < @now - 3 * heartbeat_ms';

function prepare(db: SqliteDatabase) {
  const collect = db.prepare(`DELETE FROM fleetcron_instances WHERE ${EXPIRED}`);
  const upsert = db.prepare(
    `INSERT INTO fleetcron_instances (instance_id, record, heartbeat_ms, last_seen_at)
     VALUES (@id, @record, @heartbeatMs, @now)
     ON CONFLICT (instance_id) DO UPDATE SET record = excluded.record,
       heartbeat_ms = excluded.heartbeat_ms, last_seen_at = excluded.last_seen_at`,
  );
  const list = db.prepare<[{ now: number }], { record: string; last_seen_at: number }>(
    `SELECT record, last_seen_at FROM fleetcron_instances WHERE NOT (${EXPIRED}) ORDER BY instance_id`,
  );
  return {
    heartbeat: db.transaction((args: Record<string, unknown>) => {
      collect.run(args);
      upsert.run(args);
    }),
    instances: db.transaction((now: number) => {
      collect.run({ now });
      return list.all({ now });
    }),
    leave: db.prepare('DELETE FROM fleetcron_instances WHERE instance_id = ?'),
    listJobs: db.prepare<[], JobRow>(
      `SELECT job, paused, paused_by, paused_at, last_status, last_fire_at, last_finished_at
       FROM fleetcron_jobs ORDER BY job`,
    ),
  };
}

const statements = statementCache(prepare);

/** The fleet operations, by name, merged into `storeOperations`. */
export const fleetOperations = {
  heartbeat: (db: SqliteDatabase, instance: InstanceRecord) => {
    statements(db).heartbeat.immediate({
      id: instance.instanceId,
      record: JSON.stringify(instance),
      heartbeatMs: instance.heartbeatMs,
      now: Date.now(),
    });
  },
  instances: (db: SqliteDatabase): LiveInstance[] =>
    statements(db)
      .instances.immediate(Date.now())
      .map((row) => ({
        ...(JSON.parse(row.record) as InstanceRecord),
        lastSeenAt: row.last_seen_at,
      })),
  leave: (db: SqliteDatabase, instanceId: string) => {
    statements(db).leave.run(instanceId);
  },
  listJobs: (db: SqliteDatabase): JobState[] =>
    statements(db)
      .listJobs.all()
      .map((row) => toJobState(row.job, row)),
};
