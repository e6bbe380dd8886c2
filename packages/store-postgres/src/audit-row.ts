import type { AuditEntry } from '@fleetcron/core';
import { decodeText } from '@fleetcron/postgres-shared';
import type { AuditRow } from './audit-statements.js';

/** An entry as `listAudit` returns it, from its row (`seq` as the id, bigints as numbers). */
export function fromAuditRow(row: AuditRow): AuditEntry {
  return {
    id: row.seq,
    at: Number(row.at),
    action: row.action as AuditEntry['action'],
    job: decodeText(row.job),
    by: row.actor === null ? null : decodeText(row.actor),
    note: row.note,
    requestId: row.request_id,
    schedule: row.schedule,
    version: row.version === null ? null : Number(row.version),
    details: row.details === null ? null : JSON.parse(row.details),
  };
}
