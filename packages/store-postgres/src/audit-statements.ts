import { encodeText } from '@fleetcron/postgres-shared';
import { NOW_MS } from './fleet-statements.js';
import type { StoreTables } from './schema.js';

/** SQL expressions of one audit entry, over the rows of a CTE of the mutation's statement. */
export interface AuditSource {
  /** The CTE whose rows are the mutation's effect: no row, no entry. */
  from: string;
  job: string;
  requestId: string;
  schedule: string;
  version: string;
  details: string;
}

/**
 * CTEs (to follow a statement's `WITH` list) that append one audit row per row of
 * `source.from` and prune the log, in the mutation's own statement: both commit with it or
 * neither does. Parameters from `$p`: action, actor (`by`), note, maxEntries, maxAgeMs, batch
 * (see {@link auditParameters}). The prune looks at the oldest `batch` rows only (one range of
 * the primary key: bounded work however large the log) and deletes those at least `maxEntries`
 * below the new entry's `seq` or older than `maxAgeMs`; it runs only when an entry is appended.
 * A gap in the sequence (a statement that failed after taking a `seq`) makes it keep fewer.
 */
export function auditCtes(t: StoreTables, p: number, source: AuditSource): string {
  const $ = (i: number) => `$${p + i}`;
  return `, audit_entry AS (
  INSERT INTO ${t.audit} (at, action, job, actor, note, request_id, schedule, version, details)
  SELECT ${NOW_MS}, ${$(0)}::text, ${source.job}, ${$(1)}::text, ${$(2)}::text,
    ${source.requestId}, ${source.schedule}, ${source.version}, ${source.details}
  FROM ${source.from}
  RETURNING seq
), audit_pruned AS (
  DELETE FROM ${t.audit}
  WHERE EXISTS (SELECT 1 FROM audit_entry)
    AND seq IN (SELECT seq FROM ${t.audit} ORDER BY seq LIMIT ${$(5)}::integer)
    AND (seq <= (SELECT max(seq) FROM audit_entry) - ${$(3)}::bigint
         OR at < ${NOW_MS} - ${$(4)}::bigint)
  RETURNING 1
)`;
}

/** The parameters {@link auditCtes} reads, in order (`by` as `encodeText` stores text). */
export function auditParameters(
  entry: { action: string; by: string | null; note: string | null },
  bounds: { maxEntries: number; maxAgeMs: number; batch: number },
): unknown[] {
  const by = entry.by === null ? null : encodeText(entry.by);
  return [entry.action, by, entry.note, bounds.maxEntries, bounds.maxAgeMs, bounds.batch];
}

/**
 * One page of the log newest first: $1 after seq (NULL: from the newest), $2 job (NULL: all),
 * $3 actions text[] (NULL: all), $4 before (epoch ms, NULL: no bound), $5 rows to read.
 */
export function listAuditSql(t: StoreTables): string {
  return `SELECT seq, at, action, job, actor, note, request_id, schedule, version, details
FROM ${t.audit}
WHERE ($1::bigint IS NULL OR seq < $1::bigint) AND ($2::text IS NULL OR job = $2::text)
  AND ($3::text[] IS NULL OR action = ANY($3::text[])) AND ($4::float8 IS NULL OR at < $4::float8)
ORDER BY seq DESC
LIMIT $5::integer`;
}

/** A row of the audit table (bigints arrive as strings). */
export interface AuditRow {
  seq: string;
  at: string;
  action: string;
  job: string;
  actor: string | null;
  note: string | null;
  request_id: string | null;
  schedule: string | null;
  version: string | null;
  details: string | null;
}
