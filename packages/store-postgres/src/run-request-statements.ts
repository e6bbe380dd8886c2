import { DECIDED_RUN_REQUEST_KEEP_MS } from '@fleetcron/core/backend';
import { auditCtes } from './audit-statements.js';
import { NOW_MS } from './fleet-statements.js';
import type { StoreTables } from './schema.js';

/** Most decided requests one take collects (bounded work per call). */
const COLLECT_PER_TAKE = 100;

/** The columns of a request not decided yet, as read back. */
const REQUEST_COLUMNS = `id, job, requested_by, requested_at, seq, data, takes, take_id, taken_by,
  taken_until`;

/** Every column of a decided request (see {@link RunRequestRow}). */
const DECIDED_COLUMNS = `${REQUEST_COLUMNS}, decided_at, fire_at, decided_by`;

/** `pg_notify` of job `job` on channel `channel` (an empty payload when too long for NOTIFY). */
function notifyJob(channel: string, job: string): string {
  return `pg_notify(${channel}, CASE WHEN octet_length(${job}) < 7000 THEN ${job} ELSE '' END)`;
}

/**
 * Stores a run request, appends its `run` audit entry and notifies listeners, in one statement.
 * Parameters: $1 id, $2 job, $3 requested by, $4 notification channel, $5 data (JSON text or
 * NULL), then the audit parameters from $6 (`auditParameters`). Returns `requested_at` (store
 * clock).
 */
export function requestRunSql(t: StoreTables): string {
  return `WITH r AS (
  INSERT INTO ${t.runRequests} (id, job, requested_by, requested_at, data)
  VALUES ($1::text, $2::text, $3::text, ${NOW_MS}, $5::text)
  RETURNING requested_at
)${auditCtes(t, 6, { from: 'r', job: '$2::text', requestId: '$1::text', schedule: 'NULL', version: 'NULL', details: 'NULL' })}
SELECT requested_at, ${notifyJob('$4::text', '$2::text')} AS notified
FROM r`;
}

/**
 * Takes the requests of jobs $1 (text[]) that no take holds (never taken, released, or
 * `taken_until` at or before the database clock), in one statement: each gets take id
 * `md5($4 || id)` as a UUID ($4 a fresh random UUID per call, so every take of every request has
 * its own), `taken_by` $2, `taken_until` = now + $3 ms and `takes` + 1. `FOR UPDATE SKIP LOCKED`
 * with PostgreSQL's re-check of a row changed meanwhile: a row another take or a decision is
 * changing is skipped, one it changed is taken only if still free (a decided one is gone), so no
 * two takes hold a request at once. The same statement collects up to {@link COLLECT_PER_TAKE}
 * requests decided more than `DECIDED_RUN_REQUEST_KEEP_MS` ago.
 */
export function takeRunRequestsSql(t: StoreTables): string {
  return `WITH collected AS (
  DELETE FROM ${t.runDecisions} WHERE id IN (
    SELECT id FROM ${t.runDecisions}
    WHERE decided_at < ${NOW_MS} - ${DECIDED_RUN_REQUEST_KEEP_MS}
    ORDER BY decided_at LIMIT ${COLLECT_PER_TAKE} FOR UPDATE SKIP LOCKED
  )
)
UPDATE ${t.runRequests} SET takes = takes + 1, take_id = md5($4::text || id)::uuid::text,
  taken_by = $2::text, taken_until = ${NOW_MS} + $3::bigint
WHERE id IN (
  SELECT id FROM ${t.runRequests}
  WHERE job = ANY($1::text[]) AND (taken_until IS NULL OR taken_until <= ${NOW_MS})
  ORDER BY seq FOR UPDATE SKIP LOCKED
)
RETURNING ${REQUEST_COLUMNS}`;
}

/**
 * Decides request $1 for take $2: moves it, only while $2 is its current take, from the
 * requests to the decisions (`decided_at` now, $3 fire at, $4 decided by), in one statement (the
 * row lock serialises it with takes and other decisions). One row: decided now. None: it was not
 * this take's to decide, or this take decided it already; {@link decidedByTakeSql} tells which
 * (a statement of its own, so it sees a decision committed while this one waited for the row).
 */
export function decideRunRequestSql(t: StoreTables): string {
  return `WITH moved AS (
  DELETE FROM ${t.runRequests} WHERE id = $1::text AND take_id = $2::text
  RETURNING ${REQUEST_COLUMNS}
)
INSERT INTO ${t.runDecisions} (${DECIDED_COLUMNS})
SELECT ${REQUEST_COLUMNS}, ${NOW_MS}, $3::bigint, $4::text FROM moved
RETURNING 1 AS decided`;
}

/** Whether take $2 decided request $1 (a repeated decision after a lost reply). */
export function decidedByTakeSql(t: StoreTables): string {
  return `SELECT 1 AS decided FROM ${t.runDecisions} WHERE id = $1::text AND take_id = $2::text`;
}

/**
 * Gives request $1 back from take $2 (takeable at once) if it is not decided, and notifies
 * channel $3 with its job like a new request, in one statement.
 */
export function releaseRunRequestSql(t: StoreTables): string {
  return `WITH r AS (
  UPDATE ${t.runRequests} SET taken_until = NULL
  WHERE id = $1::text AND take_id = $2::text
  RETURNING job
)
SELECT ${notifyJob('$3::text', 'job')} AS notified FROM r`;
}

/** Request $1, decided or not, and the database clock (`now`), to tell its phase. */
export function getRunRequestSql(t: StoreTables): string {
  return `SELECT ${DECIDED_COLUMNS}, ${NOW_MS} AS now FROM ${t.runDecisions} WHERE id = $1::text
UNION ALL
SELECT ${REQUEST_COLUMNS}, NULL, NULL, NULL, ${NOW_MS} FROM ${t.runRequests} WHERE id = $1::text`;
}

/** A run request as read back (the decision columns `NULL` while not decided). */
export interface RunRequestRow {
  id: string;
  job: string;
  requested_by: string;
  requested_at: string;
  seq: string;
  data: string | null;
  takes: number;
  take_id: string | null;
  taken_by: string | null;
  taken_until: string | null;
  decided_at: string | null;
  fire_at: string | null;
  decided_by: string | null;
}

/** The names of the run-request statements. */
export type RunRequestStatement =
  | 'requestRun'
  | 'takeRunRequests'
  | 'decideRunRequest'
  | 'decidedByTake'
  | 'releaseRunRequest'
  | 'getRunRequest';

/** Every run-request statement on tables `t`, by name. */
export function runRequestStatements(t: StoreTables): Record<RunRequestStatement, string> {
  return {
    requestRun: requestRunSql(t),
    takeRunRequests: takeRunRequestsSql(t),
    decideRunRequest: decideRunRequestSql(t),
    decidedByTake: decidedByTakeSql(t),
    releaseRunRequest: releaseRunRequestSql(t),
    getRunRequest: getRunRequestSql(t),
  };
}
