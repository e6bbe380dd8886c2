/**
 * The fleet-control operations of the SQLite store (registry, run requests, job listing), run on
 * the store's connection like the others. One host, one clock: `lastSeenAt`, `pausedAt` and
 * `requestedAt` are the host's clock (`Date.now()` in the connection's thread). Only type imports
 * from outside, and `statementCache` from its own entry: the worker thread loads this file by URL.
 */
import type {
  InstanceRecord,
  JobState,
  LiveInstance,
  RunRequest,
  RunStatus,
} from '@fleetcron/core';
import type { SqliteDatabase } from '@fleetcron/sqlite-shared';
import { statementCache } from '@fleetcron/sqlite-shared/statement-cache';
import { FLEET_COLUMNS, SQLITE_FLEET_SCHEMA } from './schema.js';

/** Adds the fleet tables, and the fleet columns to tables made before them, in one transaction. */
export function migrateFleet(db: SqliteDatabase): void {
  db.transaction(() => {
    db.exec(SQLITE_FLEET_SCHEMA);
    for (const [table, column, type] of FLEET_COLUMNS) {
      const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
      if (!columns.some((c) => c.name === column)) {
        db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
      }
    }
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
  const take = db.prepare<[string], RunRequest & { seq: number }>(
    `DELETE FROM fleetcron_run_requests WHERE job IN (SELECT value FROM json_each(?))
     RETURNING seq, id, job, requested_by AS requestedBy, requested_at AS requestedAt`,
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
    requestRun: db.prepare(
      `INSERT INTO fleetcron_run_requests (id, job, requested_by, requested_at)
       VALUES (@id, @job, @requestedBy, @requestedAt)`,
    ),
    take: db.transaction((jobs: string) => take.all(jobs)),
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
  requestRun: (db: SqliteDatabase, request: RunRequest): RunRequest => {
    const stamped = { ...request, requestedAt: Date.now() };
    statements(db).requestRun.run(stamped);
    return stamped;
  },
  /** One `BEGIN IMMEDIATE` `DELETE … RETURNING`: each request to exactly one taker. */
  takeRunRequests: (db: SqliteDatabase, jobs: string[]): RunRequest[] =>
    statements(db)
      .take.immediate(JSON.stringify(jobs))
      .sort((a, b) => a.seq - b.seq)
      .map(({ id, job, requestedBy, requestedAt }) => ({ id, job, requestedBy, requestedAt })),
  listJobs: (db: SqliteDatabase): JobState[] =>
    statements(db)
      .listJobs.all()
      .map((row) => toJobState(row.job, row)),
};
