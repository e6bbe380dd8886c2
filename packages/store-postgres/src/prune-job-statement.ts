import type { StoreTables } from './schema.js';

/**
 * `pruneJob` in one statement: deletes at most $4 executions of job $1 (oldest first by
 * `(started_at, id)`) that are beyond its newest $2 (NULL: no count bound) or started before $3
 * (NULL: no age bound), never a `running` one; returns how many.
 *
 * Both bounds cut the job's history at a point of the `(started_at, id)` order, so the rows that
 * may go are those below the higher of the two points: `kept`, the oldest of the newest $2 rows
 * (read at `OFFSET $2 - 1` on the history index; every row with $2 = 0; none while the job has
 * fewer than $2), and `($3, '')` (`''` sorts before every id, so `< ($3, '')` is
 * `started_at < $3`). The candidates are then one range scan of the history index below that
 * point, oldest first, up to $4: the work is bounded by $2 + $4 index entries plus the running rows
 * skipped. Rows another transaction holds are skipped (`SKIP LOCKED`), not waited for.
 */
export function pruneJobSql(t: StoreTables): string {
  return `WITH kept AS (
  SELECT started_at AS s, id AS i FROM ${t.executions}
  WHERE job = $1::text AND $2::integer > 0
  ORDER BY started_at DESC, id DESC
  OFFSET greatest($2::integer - 1, 0) LIMIT 1
), bounds AS (
  SELECT s, i FROM kept
  UNION ALL SELECT 9223372036854775807, '' WHERE $2::integer = 0
  UNION ALL SELECT $3::bigint, '' WHERE $3::bigint IS NOT NULL
), bound AS (
  SELECT s, i COLLATE "C" AS i FROM bounds ORDER BY s DESC, i COLLATE "C" DESC LIMIT 1
), doomed AS (
  SELECT e.id FROM ${t.executions} e, bound b
  WHERE e.job = $1::text AND (e.started_at, e.id) < (b.s, b.i) AND e.status <> 'running'
  ORDER BY e.started_at, e.id
  LIMIT $4::integer
  FOR UPDATE OF e SKIP LOCKED
), gone AS (
  DELETE FROM ${t.executions} e USING doomed WHERE e.id = doomed.id AND e.status <> 'running'
  RETURNING 1
)
SELECT count(*) AS n FROM gone`;
}
