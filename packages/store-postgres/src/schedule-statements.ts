import { auditCtes } from './audit-statements.js';
import { NOW_MS } from './fleet-statements.js';
import type { StoreTables } from './schema.js';

/** Columns of a schedule row, as read back. */
const COLUMNS = `id, handler, trigger, data, enabled, options, version, removed, created_at, created_by,
  updated_at, updated_by`;

/** The audit entry of a schedule write, from its CTE `s` (the schedule after, or as removed). */
const SCHEDULE_AUDIT = {
  from: 's',
  job: `'schedule:' || s.id`,
  requestId: 'NULL',
  schedule: 's.id',
  version: 's.version',
  details: `json_build_object('handler', s.handler, 'enabled', s.enabled, 'trigger', s.trigger::json)::text`,
};

/**
 * Creates a schedule at version 1, or revives a removed one's tombstone one version past it;
 * an id that is live is left alone (no row returned: `DUPLICATE_SCHEDULE`). Notifies the
 * schedule channel and appends the audit entry in the same statement (delivered at commit).
 * Parameters: $1 id, $2 handler, $3 trigger JSON, $4 data JSON, $5 enabled, $6 options JSON, $7
 * by, $8 channel, then the audit parameters from $9 (`auditParameters`).
 */
export function createScheduleSql(t: StoreTables): string {
  return `WITH s AS (
  INSERT INTO ${t.schedules} AS s (id, handler, trigger, data, enabled, options, version, removed,
    created_at, created_by, updated_at, updated_by)
  VALUES ($1::text, $2::text, $3::text, $4::text, $5::boolean, $6::text, 1, false,
    ${NOW_MS}, $7::text, ${NOW_MS}, $7::text)
  ON CONFLICT (id) DO UPDATE SET
    handler = excluded.handler, trigger = excluded.trigger, data = excluded.data,
    enabled = excluded.enabled, options = excluded.options, version = s.version + 1,
    removed = false, created_at = excluded.created_at, created_by = excluded.created_by,
    updated_at = excluded.updated_at, updated_by = excluded.updated_by
  WHERE s.removed
  RETURNING ${COLUMNS}
)${auditCtes(t, 9, SCHEDULE_AUDIT)}
SELECT ${COLUMNS}, pg_notify($8::text, id) AS notified FROM s`;
}

/**
 * Replaces a live schedule's definition if it is at the expected version, in one statement (the
 * row lock makes two writers from one version serialise: the second sees the new version and
 * matches nothing), with its audit entry. Parameters: $1 id, $2 handler, $3 trigger, $4 data, $5
 * enabled, $6 options, $7 by, $8 expected version, $9 channel, then the audit parameters from
 * $10. No row (and no entry): a conflict or an unknown id (read to tell).
 */
export function replaceScheduleSql(t: StoreTables): string {
  return `WITH s AS (
  UPDATE ${t.schedules} SET handler = $2::text, trigger = $3::text, data = $4::text,
    enabled = $5::boolean, options = $6::text, version = version + 1,
    updated_at = ${NOW_MS}, updated_by = $7::text
  WHERE id = $1::text AND version = $8::bigint AND NOT removed
  RETURNING ${COLUMNS}
)${auditCtes(t, 10, SCHEDULE_AUDIT)}
SELECT ${COLUMNS}, pg_notify($9::text, id) AS notified FROM s`;
}

/**
 * Turns a live schedule into its tombstone (version + 1, who and when) if it is at the expected
 * version ($3 NULL: any), returning it as it was, with its audit entry (the version removed).
 * Parameters: $1 id, $2 by, $3 expected version, $4 channel, then the audit parameters from $5.
 */
export function removeScheduleSql(t: StoreTables): string {
  const old = COLUMNS.split(',')
    .map((c) => `old.${c.trim()}`)
    .join(', ');
  return `WITH old AS (
  SELECT ${COLUMNS} FROM ${t.schedules} WHERE id = $1::text FOR UPDATE
), s AS (
  UPDATE ${t.schedules} t SET removed = true, version = old.version + 1,
    updated_at = ${NOW_MS}, updated_by = $2::text
  FROM old
  WHERE t.id = old.id AND NOT old.removed AND ($3::bigint IS NULL OR old.version = $3::bigint)
  RETURNING ${old}
)${auditCtes(t, 5, SCHEDULE_AUDIT)}
SELECT ${COLUMNS}, pg_notify($4::text, id) AS notified FROM s`;
}

/** Reads a schedule, a tombstone included (to tell a conflict from an unknown id): $1 id. */
export function getScheduleSql(t: StoreTables): string {
  return `SELECT ${COLUMNS} FROM ${t.schedules} WHERE id = $1::text`;
}

/**
 * One page of live schedules by id: $1 handler (NULL: all), $2 after id (NULL: from the start),
 * $3 rows to read (one more than the page).
 */
export function listSchedulesSql(t: StoreTables): string {
  return `SELECT ${COLUMNS} FROM ${t.schedules}
WHERE NOT removed AND ($1::text IS NULL OR handler = $1::text)
  AND ($2::text IS NULL OR id > $2::text)
ORDER BY id
LIMIT $3::integer`;
}

/** A row of the schedules table (bigints arrive as strings). */
export interface ScheduleRow {
  id: string;
  handler: string;
  trigger: string;
  data: string;
  enabled: boolean;
  options: string;
  version: string;
  removed: boolean;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

/** The names of the schedule statements. */
export type ScheduleStatement =
  | 'createSchedule'
  | 'replaceSchedule'
  | 'removeSchedule'
  | 'getSchedule'
  | 'listSchedules';

/** Every schedule statement on tables `t`, by name. */
export function scheduleStatements(t: StoreTables): Record<ScheduleStatement, string> {
  return {
    createSchedule: createScheduleSql(t),
    replaceSchedule: replaceScheduleSql(t),
    removeSchedule: removeScheduleSql(t),
    getSchedule: getScheduleSql(t),
    listSchedules: listSchedulesSql(t),
  };
}
