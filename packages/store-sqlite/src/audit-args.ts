import type { AuditEntry, AuditRecord, AuditRetention } from '@fleetcron/core';
import { AUDIT_PRUNE_BATCH, checkAuditNote } from '@fleetcron/core/backend';
import type { AuditArgs, AuditRow, ScheduleAuditArgs } from './audit-operations.js';

/** The audit log's bounds as the connection applies them. */
export type AuditBounds = Required<AuditRetention>;

/** What the connection appends for `record` (built by core's `*AuditRecord`). */
export function auditArgs(record: AuditRecord, bounds: AuditBounds): AuditArgs {
  return {
    ...record,
    details: record.details === null ? null : JSON.stringify(record.details),
    ...bounds,
    batch: AUDIT_PRUNE_BATCH,
  };
}

/**
 * What a schedule write appends, the schedule's fields left to the connection (it reads them
 * from the row it writes). `by` and `note` are checked by core's `assertWriter` first.
 */
export function scheduleAuditArgs(
  action: string,
  write: { by: string; note?: string | null },
  bounds: AuditBounds,
): ScheduleAuditArgs {
  return {
    ...{ action, by: write.by, note: checkAuditNote(write.note), requestId: null },
    ...bounds,
    batch: AUDIT_PRUNE_BATCH,
  };
}

/** An entry as `listAudit` returns it, from its row. */
export function fromAuditRow(row: AuditRow): AuditEntry {
  return {
    id: String(row.seq),
    at: row.at,
    action: row.action as AuditEntry['action'],
    job: row.job,
    by: row.actor,
    note: row.note,
    requestId: row.request_id,
    schedule: row.schedule,
    version: row.version,
    details: row.details === null ? null : JSON.parse(row.details),
  };
}
