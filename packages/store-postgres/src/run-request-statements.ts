import { DECIDED_RUN_REQUEST_KEEP_MS } from '@fleetcron/core/backend';
import { NOW_MS } from './fleet-statements.js';
import type { StoreTables } from './schema.js';

/** Most decided requests one take collects (bounded work per call). */
const COLLECT_PER_TAKE = 100;

/** The columns of a run request as read back (see {@link RunRequestRow}). */
const COLUMNS = `id, job, requested_by, requested_at, seq, data, takes, take_id, taken_by,
  taken_until, decided_at, fire_at, decided_by`;

/** `pg_notify` of job `job` on channel `channel` (an empty payload when too long for NOTIFY). */
function notifyJob(channel: string, job: string): string {
  return `pg_notify(${channel}, CASE WHEN octet_length(${job}) < 7000 THEN ${job} ELSE '' END)`;
}

/**
 * Stores a run request and notifies listeners, in one statement. Parameters: $1 id, $2 job,
 * $3 requested by, $4 notification channel, $5 data (JSON text or NULL). Returns `requested_at`
 * (store clock).
 */
export function requestRunSql(t: StoreTables): string {
  return `WITH r AS (
  INSERT INTO ${t.runRequests} (id, job, requested_by, requested_at, data)
  VALUES ($1::text, $2::text, $3::text, ${NOW_MS}, $5::text)
  RETURNING requested_at
)
SELECT requested_at, ${notifyJob('$4::text', '$2::text')} AS notified
FROM r`;
}

/**
 * Takes the requests of jobs $1 (text[]) that no take holds (not decided; never taken, released,
 * or `taken_until` at or before the database clock), in one statement: each gets take id
 * `md5($4 || id)` as a UUID ($4 a fresh random UUID per call, so every take of every request has
 * its own), `taken_by` $2, `taken_until` = now + $3 ms and `takes` + 1. `FOR UPDATE SKIP LOCKED`
 * with PostgreSQL's re-check of a row changed meanwhile: a row another take is changing is
 * skipped, one it changed is taken only if still free, so no two takes hold a request at once.
 * The same statement collects up to {@link COLLECT_PER_TAKE} requests decided more than
 * `DECIDED_RUN_REQUEST_KEEP_MS` ago.
 */
export function takeRunRequestsSql(t: StoreTables): string {
  return `WITH collected AS (
  DELETE FROM ${t.runRequests} WHERE id IN (
    SELECT id FROM ${t.runRequests}
    WHERE decided_at IS NOT NULL AND decided_at < ${NOW_MS} - ${DECIDED_RUN_REQUEST_KEEP_MS}
    ORDER BY decided_at LIMIT ${COLLECT_PER_TAKE} FOR UPDATE SKIP LOCKED
  )
)
UPDATE ${t.runRequests} SET takes = takes + 1, take_id = md5($4::text || id)::uuid::text,
  taken_by = $2::text, taken_until = ${NOW_MS} + $3::bigint
WHERE id IN (
  SELECT id FROM ${t.runRequests}
  WHERE job = ANY($1::text[]) AND decided_at IS NULL
    AND (taken_until IS NULL OR taken_until <= ${NOW_MS})
  ORDER BY seq FOR UPDATE SKIP LOCKED
)
RETURNING ${COLUMNS}`;
}

/**
 * Decides request $1 for take $2: one `UPDATE` whose row lock serialises it with takes and other
 * decisions, matching only while $2 is the request's current take (a take never replaces a
 * decided request's, so that also covers "already decided by this take"). The decision fields
 * are set only if not yet decided: a retry keeps the first. Parameters: $3 fire at, $4 decided
 * by. One row: true; none: false.
 */
export function decideRunRequestSql(t: StoreTables): string {
  return `UPDATE ${t.runRequests} SET
  decided_at = CASE WHEN decided_at IS NULL THEN ${NOW_MS} ELSE decided_at END,
  fire_at = CASE WHEN decided_at IS NULL THEN $3::bigint ELSE fire_at END,
  decided_by = CASE WHEN decided_at IS NULL THEN $4::text ELSE decided_by END
WHERE id = $1::text AND take_id = $2::text
RETURNING 1 AS decided`;
}

/**
 * Gives request $1 back from take $2 (takeable at once) if it is not decided, and notifies
 * channel $3 with its job like a new request, in one statement.
 */
export function releaseRunRequestSql(t: StoreTables): string {
  return `WITH r AS (
  UPDATE ${t.runRequests} SET taken_until = NULL
  WHERE id = $1::text AND take_id = $2::text AND decided_at IS NULL
  RETURNING job
)
SELECT ${notifyJob('$3::text', 'job')} AS notified FROM r`;
}

/** Request $1 and the database clock (`now`), to tell its phase. */
export function getRunRequestSql(t: StoreTables): string {
  return `SELECT ${COLUMNS}, ${NOW_MS} AS now FROM ${t.runRequests} WHERE id = $1::text`;
}

/** A row of the run requests table. */
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
  | 'releaseRunRequest'
  | 'getRunRequest';

/** Every run-request statement on tables `t`, by name. */
export function runRequestStatements(t: StoreTables): Record<RunRequestStatement, string> {
  return {
    requestRun: requestRunSql(t),
    takeRunRequests: takeRunRequestsSql(t),
    decideRunRequest: decideRunRequestSql(t),
    releaseRunRequest: releaseRunRequestSql(t),
    getRunRequest: getRunRequestSql(t),
  };
}
