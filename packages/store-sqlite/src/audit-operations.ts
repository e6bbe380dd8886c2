/**
 * The audit log of the SQLite store (core's `AuditStore`): `appendAudit` inserts one entry and
 * prunes a bounded batch, called INSIDE the transaction of the mutation it records (pause, run
 * request, schedule write), so both commit or neither does. Times are the host's clock (the
 * `now` of the mutation). Only type imports from outside, and `statementCache` from its own
 * entry: the worker thread loads this file by URL.
 */
import type { SqliteDatabase } from '@fleetcron/sqlite-shared';
import { statementCache } from '@fleetcron/sqlite-shared/statement-cache';

/** An entry to append (core's `AuditRecord`, `details` as JSON text), with the log's bounds. */
export interface AuditArgs {
  action: string;
  job: string;
  by: string | null;
  note: string | null;
  requestId: string | null;
  schedule: string | null;
  version: number | null;
  details: string | null;
  /** Keep at most this many newest entries. */
  maxEntries: number;
  /** Keep entries at most this old, ms. */
  maxAgeMs: number;
  /** Delete at most this many entries per append. */
  batch: number;
}

/** What a schedule write records: the rest (`schedule`, `version`, `details`) comes from the row. */
export type ScheduleAuditArgs = Omit<AuditArgs, 'job' | 'schedule' | 'version' | 'details'>;

/** Arguments of `listAudit` (checked by core's `auditFilter`): page size + 1, filters, position. */
export interface AuditListArgs {
  limit: number;
  job: string | null;
  /** Actions as a JSON array, or `null` for all. */
  actions: string | null;
  before: number | null;
  /** The `seq` of the previous page's last entry, or `null`. */
  after: number | null;
}

/** A row of `fleetcron_audit`. */
export interface AuditRow {
  seq: number;
  at: number;
  action: string;
  job: string;
  actor: string | null;
  note: string | null;
  request_id: string | null;
  schedule: string | null;
  version: number | null;
  details: string | null;
}

function prepare(db: SqliteDatabase) {
  return {
    insert: db.prepare(
      `INSERT INTO fleetcron_audit (at, action, job, actor, note, request_id, schedule, version, details)
       VALUES (@at, @action, @job, @by, @note, @requestId, @schedule, @version, @details)`,
    ),
    /**
     * Among the oldest `@batch` entries (one range of the primary key: bounded work however
     * large the log), those at least `@maxEntries` below the newest `seq` or older than
     * `@oldest`. Run after the insert, so the newest is the entry just appended.
     */
    prune: db.prepare(
      `DELETE FROM fleetcron_audit
       WHERE seq IN (SELECT seq FROM fleetcron_audit ORDER BY seq LIMIT @batch)
         AND (seq <= (SELECT max(seq) FROM fleetcron_audit) - @maxEntries OR at < @oldest)`,
    ),
    list: db.prepare<[Record<string, unknown>], AuditRow>(
      `SELECT seq, at, action, job, actor, note, request_id, schedule, version, details
       FROM fleetcron_audit
       WHERE (@after IS NULL OR seq < @after) AND (@job IS NULL OR job = @job)
         AND (@actions IS NULL OR action IN (SELECT value FROM json_each(@actions)))
         AND (@before IS NULL OR at < @before)
       ORDER BY seq DESC LIMIT @limit`,
    ),
  };
}

const statements = statementCache(prepare);

/**
 * Appends `entry` stamped `now` and deletes at most `entry.batch` entries beyond the bounds.
 * Call it inside the mutation's transaction.
 */
export function appendAudit(db: SqliteDatabase, entry: AuditArgs, now: number): void {
  const s = statements(db);
  const { maxEntries, maxAgeMs, batch, ...record } = entry;
  s.insert.run({ ...record, at: now });
  s.prune.run({ maxEntries, oldest: now - maxAgeMs, batch });
}

/** The audit operations, by name, merged into `storeOperations`. */
export const auditOperations = {
  listAudit: (db: SqliteDatabase, args: AuditListArgs): AuditRow[] =>
    statements(db)
      .list.all({ ...args })
      .map((row) => ({
        seq: row.seq,
        at: row.at,
        action: row.action,
        job: row.job,
        actor: row.actor,
        note: row.note,
        request_id: row.request_id,
        schedule: row.schedule,
        version: row.version,
        details: row.details,
      })),
};
