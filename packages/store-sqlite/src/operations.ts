/**
 * The store's operations, run on one connection (worker thread, or inline on your `Database`).
 * `record` is one `BEGIN IMMEDIATE` transaction (execution row and job state together); a
 * terminal row is never changed again (the first outcome wins). `recordMany` runs the same two
 * statements for each execution in order, in one `BEGIN IMMEDIATE` transaction.
 * Only type imports from outside, and `statementCache` from its own entry: the worker thread
 * loads this file by URL.
 */
import type { Execution, JobState, RunStatus } from '@fleetcron/core';
import type { SqliteDatabase, SqliteOperations } from '@fleetcron/sqlite-shared';
import { statementCache } from '@fleetcron/sqlite-shared/statement-cache';
import { type AuditArgs, appendAudit, auditOperations } from './audit-operations.js';
import { fleetOperations, migrateFleet, toJobState } from './fleet-operations.js';
import { runRequestOperations } from './run-request-operations.js';
import { scheduleOperations } from './schedule-operations.js';
import {
  SQLITE_AUDIT_SCHEMA,
  SQLITE_SCHEDULE_SCHEMA,
  SQLITE_STORE_SCHEMA,
  TERMINAL_LIST,
} from './schema.js';

interface ExecutionRow {
  id: string;
  job: string;
  fire_at: number;
  status: RunStatus;
  attempt: number;
  instance_id: string;
  token: number | null;
  started_at: number;
  finished_at: number | null;
  error: string | null;
  reason: string | null;
  requested_by: string | null;
  shard: string | null;
}

/**
 * An execution as this file reads and writes it: `shard` as JSON text (`encodeShard`), since
 * only type imports reach the worker thread; `SqliteStore` encodes and decodes it.
 */
export type ExecutionRecord = Omit<Execution, 'shard'> & { shard: string | null };

/** Arguments of `history`: the page size plus one, and the cursor position. */
export interface HistoryArgs {
  job: string;
  limit: number;
  after: { startedAt: number; id: string } | null;
  /** Statuses to keep as a JSON array, or `null` for all. */
  statuses: string | null;
}

/** Arguments of `pruneJob` (checked by `resolvePruneJob`; `null`: that bound not given). */
export interface PruneJobArgs {
  job: string;
  keepLast: number | null;
  before: number | null;
  limit: number;
}

/**
 * One statement: deletes at most `@limit` executions of `@job`, oldest first by `(started_at,
 * id)`, that are beyond its newest `@keepLast` (when `@counted`) or started before `@before`
 * (when not NULL), never a `running` one. Both bounds cut the history at a point of that order:
 * the oldest of the newest `@keepLast` (every row with 0), and `(@before, '')`; the rows below the
 * higher point are one range of the history index, read oldest first up to `@limit` (see the
 * PostgreSQL store's `pruneJobSql`, the same plan).
 */
const PRUNE_JOB_SQL = `DELETE FROM fleetcron_executions WHERE id IN (
  SELECT id FROM fleetcron_executions
  WHERE job = @job AND status <> 'running'
    AND (started_at, id) < (
      SELECT s, i FROM (
        SELECT s, i FROM (
          SELECT started_at AS s, id AS i FROM fleetcron_executions
          WHERE job = @job AND @counted = 1 AND @keepLast > 0
          ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET max(@keepLast - 1, 0))
        UNION ALL SELECT 9223372036854775807, '' WHERE @counted = 1 AND @keepLast = 0
        UNION ALL SELECT @before, '' WHERE @before IS NOT NULL)
      ORDER BY s DESC, i DESC LIMIT 1)
  ORDER BY started_at, id
  LIMIT @limit)`;

const COLUMNS =
  'id, job, fire_at, status, attempt, instance_id, token, started_at, finished_at, error, reason, requested_by, shard';

/** Arguments of `setPaused`: the flag, who, and the audit entry to append with it. */
export interface PauseArgs {
  job: string;
  paused: boolean;
  by: string | null;
  audit: AuditArgs;
}

function prepare(db: SqliteDatabase) {
  const setPaused = db.prepare(
    `INSERT INTO fleetcron_jobs (job, paused, paused_by, paused_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (job) DO UPDATE SET paused = excluded.paused,
       paused_by = excluded.paused_by, paused_at = excluded.paused_at`,
  );
  const upsert = db.prepare(
    `INSERT INTO fleetcron_executions (${COLUMNS})
     VALUES (@id, @job, @fireAt, @status, @attempt, @instanceId, @token, @startedAt, @finishedAt, @error, @reason, @requestedBy, @shard)
     ON CONFLICT (id) DO UPDATE SET
       job = excluded.job, fire_at = excluded.fire_at, status = excluded.status,
       attempt = excluded.attempt, instance_id = excluded.instance_id, token = excluded.token,
       started_at = excluded.started_at, finished_at = excluded.finished_at,
       error = excluded.error, reason = excluded.reason, requested_by = excluded.requested_by,
       shard = excluded.shard
     WHERE fleetcron_executions.status = 'running'`,
  );
  const last = db.prepare(
    `INSERT INTO fleetcron_jobs (job, last_status, last_fire_at, last_finished_at)
     SELECT @job, @status, @fireAt, @finishedAt WHERE @status IN (${TERMINAL_LIST})
     ON CONFLICT (job) DO UPDATE SET last_status = excluded.last_status,
       last_fire_at = excluded.last_fire_at, last_finished_at = excluded.last_finished_at`,
  );
  /** One record: a refused write (the row is terminal already) leaves the job's last outcome alone. */
  const write = (row: Record<string, unknown>) => {
    if (upsert.run(row).changes > 0) last.run(row);
  };
  return {
    record: db.transaction(write),
    recordMany: db.transaction((rows: Record<string, unknown>[]) => {
      for (const row of rows) write(row);
    }),
    history: db.prepare<
      [string, number | null, number | null, string | null, string | null, string | null, number],
      ExecutionRow
    >(
      `SELECT ${COLUMNS} FROM fleetcron_executions
       WHERE job = ? AND (? IS NULL OR (started_at, id) < (?, ?))
         AND (? IS NULL OR status IN (SELECT value FROM json_each(?)))
       ORDER BY started_at DESC, id DESC LIMIT ?`,
    ),
    prune: db.prepare('DELETE FROM fleetcron_executions WHERE started_at < ?'),
    pruneJob: db.prepare(PRUNE_JOB_SQL),
    state: db.prepare<
      [string],
      {
        paused: number;
        paused_by: string | null;
        paused_at: number | null;
        last_status: RunStatus | null;
        last_fire_at: number | null;
        last_finished_at: number | null;
      }
    >(
      `SELECT paused, paused_by, paused_at, last_status, last_fire_at, last_finished_at
       FROM fleetcron_jobs WHERE job = ?`,
    ),
    /** The job's paused flag and its audit entry, in one transaction. */
    setPaused: db.transaction((args: PauseArgs, now: number) => {
      setPaused.run(
        args.job,
        args.paused ? 1 : 0,
        args.paused ? args.by : null,
        args.paused ? now : null,
      );
      appendAudit(db, args.audit, now);
    }),
  };
}

const statements = statementCache(prepare);

/** The named parameters of the record statements for `execution`. */
const recordParams = (execution: ExecutionRecord): Record<string, unknown> => ({
  reason: null,
  ...execution,
  requestedBy: execution.requestedBy ?? null,
  shard: execution.shard ?? null,
});

const toExecution = (row: ExecutionRow): ExecutionRecord => ({
  id: row.id,
  job: row.job,
  fireAt: row.fire_at,
  status: row.status,
  attempt: row.attempt,
  instanceId: row.instance_id,
  token: row.token,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
  error: row.error,
  reason: row.reason,
  requestedBy: row.requested_by,
  shard: row.shard,
});

/** The store's operation set, by name (see `SqliteStore`). */
export const storeOperations: SqliteOperations = {
  migrate(db) {
    db.exec(SQLITE_STORE_SCHEMA);
    migrateFleet(db);
    db.exec(SQLITE_SCHEDULE_SCHEMA);
    db.exec(SQLITE_AUDIT_SCHEMA);
  },
  ops: {
    record: (db, execution: ExecutionRecord) => {
      statements(db).record.immediate(recordParams(execution));
    },
    recordMany: (db, executions: ExecutionRecord[]) => {
      statements(db).recordMany.immediate(executions.map(recordParams));
    },
    history: (db, args: HistoryArgs) => {
      const at = args.after;
      return statements(db)
        .history.all(
          args.job,
          at?.startedAt ?? null,
          at?.startedAt ?? null,
          at?.id ?? null,
          args.statuses,
          args.statuses,
          args.limit,
        )
        .map(toExecution);
    },
    prune: (db, before: number) => statements(db).prune.run(before).changes,
    pruneJob: (db, args: PruneJobArgs) =>
      statements(db).pruneJob.run({
        job: args.job,
        counted: args.keepLast === null ? 0 : 1,
        keepLast: args.keepLast ?? 0,
        before: args.before,
        limit: args.limit,
      }).changes,
    getJobState: (db, job: string): JobState => toJobState(job, statements(db).state.get(job)),
    setPaused: (db, args: PauseArgs) => {
      statements(db).setPaused.immediate(args, Date.now());
    },
    ...auditOperations,
    ...fleetOperations,
    ...runRequestOperations,
    ...scheduleOperations,
  },
};
