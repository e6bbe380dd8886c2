import type { StoreTables } from './schema.js';

/**
 * `pruneJob` in one statement: deletes at most $4 executions of job $1 (oldest first by
 * `(started_at, id)`) that are beyond its newest $2 (NULL: no count bound) or started before $3
 * (NULL: no age bound), never a `running` one; returns how many. The `(job, started_at DESC,
 * id DESC)` index bounds the work: the count cut is the row at OFFSET $2, and the candidates are
 * read oldest first up to $4. Rows another transaction holds are skipped (`SKIP LOCKED`), not
 * waited for: the next call takes them.
 */
export function pruneJobSql(t: StoreTables): string {
  return `WITH cut AS (
  SELECT started_at, id FROM ${t.executions}
  WHERE job = $1::text AND $2::integer IS NOT NULL
  ORDER BY started_at DESC, id DESC
  OFFSET $2::integer LIMIT 1
), doomed AS (
  SELECT e.id FROM ${t.executions} e
  WHERE e.job = $1::text AND e.status <> 'running'
    AND (($3::bigint IS NOT NULL AND e.started_at < $3::bigint)
      OR EXISTS (SELECT 1 FROM cut WHERE (e.started_at, e.id) <= (cut.started_at, cut.id)))
  ORDER BY e.started_at, e.id
  LIMIT $4::integer
  FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM ${t.executions} e USING doomed WHERE e.id = doomed.id AND e.status <> 'running'
  RETURNING 1
)
SELECT count(*) AS n FROM gone`;
}
