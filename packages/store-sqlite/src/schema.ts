/**
 * The store's tables. Times are epoch ms (INTEGER). `status` is checked against every status
 * `RunStatus` allows, written out here because this file is loaded by the worker thread, which
 * cannot import `@fleetcron/core` (a test keeps the list equal to core's).
 */
export const STORE_STATUSES = [
  'running',
  'succeeded',
  'failed',
  'timed_out',
  'skipped',
  'lease_lost',
  'aborted',
] as const;

/** Statuses that end an execution (core's `TERMINAL_STATUSES`). */
export const STORE_TERMINAL_STATUSES = STORE_STATUSES.filter((s) => s !== 'running');

const list = (values: readonly string[]) => values.map((s) => `'${s}'`).join(', ');

/** The DDL run when a connection opens: idempotent `CREATE ... IF NOT EXISTS`. */
export const SQLITE_STORE_SCHEMA = `
CREATE TABLE IF NOT EXISTS fleetcron_executions (
  id          TEXT    PRIMARY KEY,
  job         TEXT    NOT NULL,
  fire_at     INTEGER NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN (${list(STORE_STATUSES)})),
  attempt     INTEGER NOT NULL,
  instance_id TEXT    NOT NULL,
  token       INTEGER,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  error       TEXT,
  reason      TEXT,
  requested_by TEXT,
  shard       TEXT
);
CREATE INDEX IF NOT EXISTS fleetcron_exec_history ON fleetcron_executions (job, started_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS fleetcron_exec_started ON fleetcron_executions (started_at);
CREATE TABLE IF NOT EXISTS fleetcron_jobs (
  job              TEXT    PRIMARY KEY,
  paused           INTEGER NOT NULL DEFAULT 0,
  paused_by        TEXT,
  paused_at        INTEGER,
  last_status      TEXT,
  last_fire_at     INTEGER,
  last_finished_at INTEGER
) WITHOUT ROWID;
`;

/**
 * Fleet control (issue 13): the registry and run requests. Columns added to tables made before
 * it are added by `migrateFleet` (SQLite has no `ADD COLUMN IF NOT EXISTS`).
 */
export const SQLITE_FLEET_SCHEMA = `
CREATE TABLE IF NOT EXISTS fleetcron_instances (
  instance_id  TEXT    PRIMARY KEY,
  record       TEXT    NOT NULL,
  heartbeat_ms INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fleetcron_run_requests (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT    NOT NULL UNIQUE,
  job          TEXT    NOT NULL,
  requested_by TEXT    NOT NULL,
  requested_at INTEGER NOT NULL,
  data         TEXT,
  takes        INTEGER NOT NULL DEFAULT 0,
  take_id      TEXT,
  taken_by     TEXT,
  taken_until  INTEGER,
  decided_at   INTEGER,
  fire_at      INTEGER,
  decided_by   TEXT
);
`;

/**
 * Indexes of the run requests, made after {@link FLEET_COLUMNS} are added (they name columns a
 * file made before exactly-once requests lacks): the undecided requests of a job in request
 * order (what a take reads), and the decided ones by age (what a take collects). The index of
 * the first fleet-control version (every request by job) is dropped: no statement reads it.
 */
export const SQLITE_RUN_REQUEST_INDEXES = `
DROP INDEX IF EXISTS fleetcron_run_requests_job;
CREATE INDEX IF NOT EXISTS fleetcron_run_requests_open ON fleetcron_run_requests (job, seq) WHERE decided_at IS NULL;
CREATE INDEX IF NOT EXISTS fleetcron_run_requests_decided ON fleetcron_run_requests (decided_at) WHERE decided_at IS NOT NULL;
`;

/**
 * Columns added to the original tables since (fleet control; `shard`: sharded fires, the part as
 * JSON text, NULL for a plain fire; exactly-once run requests: the payload as JSON text, NULL for
 * none, the take and the decision, all NULL / 0 on a request stored before them, which reads as
 * pending): `[table, column, type]`.
 */
export const FLEET_COLUMNS: readonly [string, string, string][] = [
  ['fleetcron_executions', 'requested_by', 'TEXT'],
  ['fleetcron_executions', 'shard', 'TEXT'],
  ['fleetcron_jobs', 'paused_by', 'TEXT'],
  ['fleetcron_jobs', 'paused_at', 'INTEGER'],
  ['fleetcron_run_requests', 'data', 'TEXT'],
  ['fleetcron_run_requests', 'takes', 'INTEGER NOT NULL DEFAULT 0'],
  ['fleetcron_run_requests', 'take_id', 'TEXT'],
  ['fleetcron_run_requests', 'taken_by', 'TEXT'],
  ['fleetcron_run_requests', 'taken_until', 'INTEGER'],
  ['fleetcron_run_requests', 'decided_at', 'INTEGER'],
  ['fleetcron_run_requests', 'fire_at', 'INTEGER'],
  ['fleetcron_run_requests', 'decided_by', 'TEXT'],
];

/** SQL list of terminal statuses, for the `record` statement. */
export const TERMINAL_LIST = list(STORE_TERMINAL_STATUSES);

/**
 * Stored schedules (issue 28): one row per id, live or removed (a tombstone keeps its version).
 * `trigger`, `data` and `options` are JSON text (a rowid table: `data` may hold up to 64 KiB,
 * too large for `WITHOUT ROWID`). `change_seq` is the change counter: every write
 * sets it to one past the largest in the file, in the same statement, so watchers find what
 * changed since their last read with one range of `fleetcron_sched_change`.
 */
export const SQLITE_SCHEDULE_SCHEMA = `
CREATE TABLE IF NOT EXISTS fleetcron_schedules (
  id         TEXT    PRIMARY KEY,
  handler    TEXT    NOT NULL,
  trigger    TEXT    NOT NULL,
  data       TEXT    NOT NULL,
  enabled    INTEGER NOT NULL,
  options    TEXT    NOT NULL,
  version    INTEGER NOT NULL,
  removed    INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  created_by TEXT    NOT NULL,
  updated_at INTEGER NOT NULL,
  updated_by TEXT    NOT NULL,
  change_seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS fleetcron_sched_handler ON fleetcron_schedules (handler, id) WHERE removed = 0;
CREATE UNIQUE INDEX IF NOT EXISTS fleetcron_sched_change ON fleetcron_schedules (change_seq);
`;

/**
 * The audit log (issue 30): one row per mutation, appended in the mutation's own transaction.
 * `seq` orders it (newest first is `seq DESC`) and is the entry's id; `details` is JSON text.
 * `actor` is the entry's `by` (BY is an SQL keyword). A file made before it gets the table at
 * its next open (`CREATE ... IF NOT EXISTS`): entries start from then.
 */
export const SQLITE_AUDIT_SCHEMA = `
CREATE TABLE IF NOT EXISTS fleetcron_audit (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  action     TEXT    NOT NULL,
  job        TEXT    NOT NULL,
  actor      TEXT,
  note       TEXT,
  request_id TEXT,
  schedule   TEXT,
  version    INTEGER,
  details    TEXT
);
CREATE INDEX IF NOT EXISTS fleetcron_audit_job ON fleetcron_audit (job, seq);
CREATE INDEX IF NOT EXISTS fleetcron_audit_at ON fleetcron_audit (at);
`;
