import { TERMINAL_STATUSES } from '@fleetcron/core/backend';
import { auditCtes, listAuditSql } from './audit-statements.js';
import { heartbeatSql, instancesSql, leaveSql, listJobsSql, NOW_MS } from './fleet-statements.js';
import { pruneJobSql } from './prune-job-statement.js';
import type { StoreTables } from './schema.js';

/** Columns of an execution row, in the order of the record statement's parameters. */
const COLUMNS = `id, job, fire_at, status, attempt, instance_id, token, started_at, finished_at, error, reason, requested_by, shard`;

const TERMINAL = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ');

/** The execution upsert's conflict clause: a row is rewritten only while it is `running`. */
const UPDATE_RUNNING_ROW = `ON CONFLICT (id) DO UPDATE SET
    job = excluded.job, fire_at = excluded.fire_at, status = excluded.status,
    attempt = excluded.attempt, instance_id = excluded.instance_id, token = excluded.token,
    started_at = excluded.started_at, finished_at = excluded.finished_at,
    error = excluded.error, reason = excluded.reason, requested_by = excluded.requested_by,
    shard = excluded.shard
  WHERE e.status = 'running'`;

/** The job state upsert's conflict clause: the job's last outcome is the written one. */
const UPDATE_JOB_STATE = `ON CONFLICT (job) DO UPDATE SET
  last_status = excluded.last_status,
  last_fire_at = excluded.last_fire_at,
  last_finished_at = excluded.last_finished_at`;

/**
 * Upserts an execution by id and, when its status is terminal, the job's last outcome, in one
 * statement. Once a row is terminal no later write changes it (the first outcome wins; a late
 * write of the start or a second outcome is dropped, and the job's last outcome is not touched). Parameters: $1 id, $2 job, $3 fireAt, $4 status, $5 attempt, $6 instanceId,
 * $7 token, $8 startedAt, $9 finishedAt, $10 error, $11 reason, $12 requestedBy, $13 shard (JSON
 * text, see `encodeShard`).
 */
export function recordSql(t: StoreTables): string {
  return `WITH execution AS (
  INSERT INTO ${t.executions} AS e (${COLUMNS})
  VALUES ($1::text, $2::text, $3::bigint, $4::text, $5::integer, $6::text, $7::bigint,
          $8::bigint, $9::bigint, $10::text, $11::text, $12::text, $13::text)
  ${UPDATE_RUNNING_ROW}
  RETURNING 1
)
INSERT INTO ${t.jobs} AS j (job, last_status, last_fire_at, last_finished_at)
SELECT $2::text, $4::text, $3::bigint, $9::bigint
FROM execution WHERE $4::text IN (${TERMINAL})
${UPDATE_JOB_STATE}`;
}

/**
 * {@link recordSql} for many executions in one statement: the same upsert (the first outcome
 * wins) and, for the written rows that are terminal, the job's last outcome (the last such row
 * of each job in the batch). Parameters: 13 arrays, one per column of {@link recordSql} in its
 * order; the caller merges the writes of one id first (an upsert cannot touch a row twice in one
 * statement). Rows are written in id order and job states in job order, so concurrent batches
 * lock rows in the same order and cannot deadlock.
 */
export function recordManySql(t: StoreTables): string {
  return `WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::integer[],
    $6::text[], $7::bigint[], $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[],
    $13::text[]) WITH ORDINALITY AS i(${COLUMNS}, ord)
), execution AS (
  INSERT INTO ${t.executions} AS e (${COLUMNS})
  SELECT ${COLUMNS} FROM input ORDER BY id
  ${UPDATE_RUNNING_ROW}
  RETURNING e.id
), latest AS (
  SELECT DISTINCT ON (i.job) i.job, i.status, i.fire_at, i.finished_at
  FROM input i JOIN execution x ON x.id = i.id
  WHERE i.status IN (${TERMINAL})
  ORDER BY i.job, i.ord DESC
)
INSERT INTO ${t.jobs} AS j (job, last_status, last_fire_at, last_finished_at)
SELECT job, status, fire_at, finished_at FROM latest ORDER BY job
${UPDATE_JOB_STATE}`;
}

/**
 * One page of a job's history, newest first; reads one row more than the page to know whether
 * another page follows. Parameters: $1 job, $2 cursor startedAt (or NULL), $3 cursor id,
 * $4 rows to read, $5 statuses (text[], NULL for all). Uses the `(job, started_at DESC, id DESC)`
 * index.
 */
export function historySql(t: StoreTables): string {
  return `SELECT ${COLUMNS} FROM ${t.executions}
WHERE job = $1::text AND ($2::bigint IS NULL OR (started_at, id) < ($2::bigint, $3::text))
  AND ($5::text[] IS NULL OR status = ANY($5::text[]))
ORDER BY started_at DESC, id DESC
LIMIT $4::integer`;
}

/** Deletes executions that started before $1; returns how many. */
export function pruneSql(t: StoreTables): string {
  return `WITH gone AS (DELETE FROM ${t.executions} WHERE started_at < $1::bigint RETURNING 1)
SELECT count(*) AS n FROM gone`;
}

/** Reads a job's state: $1 job. */
export function jobStateSql(t: StoreTables): string {
  return `SELECT paused, paused_by, paused_at, last_status, last_fire_at, last_finished_at
FROM ${t.jobs} WHERE job = $1::text`;
}

/**
 * Reads many jobs' states in one statement: $1 jobs (text[]). One row per element, in order
 * (`ord`), with null columns for a job never seen.
 */
export function jobStatesSql(t: StoreTables): string {
  return `SELECT i.ord, j.paused, j.paused_by, j.paused_at, j.last_status, j.last_fire_at,
       j.last_finished_at
FROM unnest($1::text[]) WITH ORDINALITY AS i(job, ord)
LEFT JOIN ${t.jobs} j ON j.job = i.job
ORDER BY i.ord`;
}

/**
 * Sets a job's paused flag with who and when (database clock; both cleared on resume) and appends
 * its audit entry, in one statement: $1 job, $2 paused, $3 by, then the audit parameters from $4
 * (`auditParameters`).
 */
export function setPausedSql(t: StoreTables): string {
  return `WITH j AS (
  INSERT INTO ${t.jobs} AS j (job, paused, paused_by, paused_at)
  VALUES ($1::text, $2::boolean, CASE WHEN $2::boolean THEN $3::text END,
          CASE WHEN $2::boolean THEN ${NOW_MS} END)
  ON CONFLICT (job) DO UPDATE SET
    paused = excluded.paused, paused_by = excluded.paused_by, paused_at = excluded.paused_at
  RETURNING job
)${auditCtes(t, 4, { from: 'j', job: 'j.job', requestId: 'NULL', schedule: 'NULL', version: 'NULL', details: 'NULL' })}
SELECT job FROM j`;
}

/** A row of the executions table (bigints arrive as strings). */
export interface ExecutionRow {
  id: string;
  job: string;
  fire_at: string;
  status: string;
  attempt: number;
  instance_id: string;
  token: string | null;
  started_at: string;
  finished_at: string | null;
  error: string | null;
  reason: string | null;
  requested_by: string | null;
  shard: string | null;
}

/** A row of the jobs table. */
export interface JobRow {
  paused: boolean;
  paused_by: string | null;
  paused_at: string | null;
  last_status: string | null;
  last_fire_at: string | null;
  last_finished_at: string | null;
}

/** The names of the store's statements. */
export type StoreStatement =
  | 'record'
  | 'recordMany'
  | 'history'
  | 'prune'
  | 'pruneJob'
  | 'jobState'
  | 'jobStates'
  | 'setPaused'
  | 'listAudit'
  | 'heartbeat'
  | 'instances'
  | 'leave'
  | 'listJobs';

/** Every statement of the store on tables `t`, by name. */
export function storeStatements(t: StoreTables): Record<StoreStatement, string> {
  return {
    record: recordSql(t),
    recordMany: recordManySql(t),
    history: historySql(t),
    prune: pruneSql(t),
    pruneJob: pruneJobSql(t),
    jobState: jobStateSql(t),
    jobStates: jobStatesSql(t),
    setPaused: setPausedSql(t),
    listAudit: listAuditSql(t),
    heartbeat: heartbeatSql(t),
    instances: instancesSql(t),
    leave: leaveSql(t),
    listJobs: listJobsSql(t),
  };
}
