/**
 * The store's operations, run on one connection (worker thread, or inline on your `Database`).
 * `record` is one `BEGIN IMMEDIATE` transaction (execution row and job state together).
 * Only type imports from outside: the worker thread loads this file by URL.
 */
import type { Execution, JobState, RunStatus } from '@fleetcron/core';
import type { SqliteOperations } from '@fleetcron/sqlite-shared';
import type Database from 'better-sqlite3';
import { SQLITE_STORE_SCHEMA, TERMINAL_LIST } from './schema.js';

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
}

/** Arguments of `history`: the page size plus one, and the cursor position. */
export interface HistoryArgs {
  job: string;
  limit: number;
  after: { startedAt: number; id: string } | null;
}

const COLUMNS =
  'id, job, fire_at, status, attempt, instance_id, token, started_at, finished_at, error, reason';

function prepare(db: Database.Database) {
  const upsert = db.prepare(
    `INSERT INTO fleetcron_executions (${COLUMNS})
     VALUES (@id, @job, @fireAt, @status, @attempt, @instanceId, @token, @startedAt, @finishedAt, @error, @reason)
     ON CONFLICT (id) DO UPDATE SET
       job = excluded.job, fire_at = excluded.fire_at, status = excluded.status,
       attempt = excluded.attempt, instance_id = excluded.instance_id, token = excluded.token,
       started_at = excluded.started_at, finished_at = excluded.finished_at,
       error = excluded.error, reason = excluded.reason`,
  );
  const last = db.prepare(
    `INSERT INTO fleetcron_jobs (job, last_status, last_fire_at, last_finished_at)
     SELECT @job, @status, @fireAt, @finishedAt WHERE @status IN (${TERMINAL_LIST})
     ON CONFLICT (job) DO UPDATE SET last_status = excluded.last_status,
       last_fire_at = excluded.last_fire_at, last_finished_at = excluded.last_finished_at`,
  );
  return {
    record: db.transaction((row: Record<string, unknown>) => {
      upsert.run(row);
      last.run(row);
    }),
    history: db.prepare<
      [string, number | null, number | null, string | null, number],
      ExecutionRow
    >(
      `SELECT ${COLUMNS} FROM fleetcron_executions
       WHERE job = ? AND (? IS NULL OR (started_at, id) < (?, ?))
       ORDER BY started_at DESC, id DESC LIMIT ?`,
    ),
    prune: db.prepare('DELETE FROM fleetcron_executions WHERE started_at < ?'),
    state: db.prepare<
      [string],
      {
        paused: number;
        last_status: RunStatus | null;
        last_fire_at: number | null;
        last_finished_at: number | null;
      }
    >(
      'SELECT paused, last_status, last_fire_at, last_finished_at FROM fleetcron_jobs WHERE job = ?',
    ),
    setPaused: db.prepare(
      `INSERT INTO fleetcron_jobs (job, paused) VALUES (?, ?)
       ON CONFLICT (job) DO UPDATE SET paused = excluded.paused`,
    ),
  };
}

type Statements = ReturnType<typeof prepare>;
const cache = new WeakMap<Database.Database, Statements>();

function statements(db: Database.Database): Statements {
  let found = cache.get(db);
  if (!found) {
    found = prepare(db);
    cache.set(db, found);
  }
  return found;
}

const toExecution = (row: ExecutionRow): Execution => ({
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
});

/** The store's operation set, by name (see `SqliteStore`). */
export const storeOperations: SqliteOperations = {
  migrate(db) {
    db.exec(SQLITE_STORE_SCHEMA);
  },
  ops: {
    record: (db, execution: Execution) => {
      statements(db).record.immediate({ reason: null, ...execution });
    },
    history: (db, args: HistoryArgs) => {
      const at = args.after;
      return statements(db)
        .history.all(
          args.job,
          at?.startedAt ?? null,
          at?.startedAt ?? null,
          at?.id ?? null,
          args.limit,
        )
        .map(toExecution);
    },
    prune: (db, before: number) => statements(db).prune.run(before).changes,
    getJobState: (db, job: string): JobState => {
      const row = statements(db).state.get(job);
      return {
        job,
        paused: row?.paused === 1,
        lastStatus: row?.last_status ?? null,
        lastFireAt: row?.last_fire_at ?? null,
        lastFinishedAt: row?.last_finished_at ?? null,
      };
    },
    setPaused: (db, args: { job: string; paused: boolean }) => {
      statements(db).setPaused.run(args.job, args.paused ? 1 : 0);
    },
  },
};
