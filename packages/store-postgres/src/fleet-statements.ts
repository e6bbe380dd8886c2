import type { StoreTables } from './schema.js';

/** The database clock in epoch ms (clock_timestamp: the time of the statement, not of BEGIN). */
export const NOW_MS = `floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;

/**
 * Upserts an instance record and collects other expired records, in one statement; the store's
 * clock stamps `last_seen_at`. Parameters: $1 instance id, $2 record JSON, $3 heartbeat ms.
 */
export function heartbeatSql(t: StoreTables): string {
  return `WITH gone AS (
  DELETE FROM ${t.instances}
  WHERE instance_id <> $1::text AND last_seen_at < ${NOW_MS} - 3 * heartbeat_ms
)
INSERT INTO ${t.instances} (instance_id, record, heartbeat_ms, last_seen_at)
VALUES ($1::text, $2::text, $3::bigint, ${NOW_MS})
ON CONFLICT (instance_id) DO UPDATE SET
  record = excluded.record, heartbeat_ms = excluded.heartbeat_ms,
  last_seen_at = excluded.last_seen_at`;
}

/** Live instances by id, collecting expired ones in the same statement. No parameters. */
export function instancesSql(t: StoreTables): string {
  return `WITH gone AS (
  DELETE FROM ${t.instances} WHERE last_seen_at < ${NOW_MS} - 3 * heartbeat_ms
)
SELECT record, last_seen_at FROM ${t.instances}
WHERE last_seen_at >= ${NOW_MS} - 3 * heartbeat_ms
ORDER BY instance_id`;
}

/** Removes an instance record: $1 instance id. */
export function leaveSql(t: StoreTables): string {
  return `DELETE FROM ${t.instances} WHERE instance_id = $1::text`;
}

/** Every job with state, by name. No parameters. */
export function listJobsSql(t: StoreTables): string {
  return `SELECT job, paused, paused_by, paused_at, last_status, last_fire_at, last_finished_at
FROM ${t.jobs} ORDER BY job`;
}

/** A row of the instances table. */
export interface InstanceRow {
  record: string;
  last_seen_at: string;
}
