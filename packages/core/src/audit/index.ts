export {
  type AuditFilter,
  auditFilter,
  boundActor,
  checkActor,
  checkAuditAction,
  checkAuditDetails,
  checkAuditNote,
  encodeAuditCursor,
  MAX_ACTOR_LENGTH,
  resolveAuditRetention,
} from './audit-input.js';
export {
  AUDIT_ACTIONS,
  AUDIT_PRUNE_BATCH,
  type AuditAction,
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  type AuditRetention,
  type AuditStore,
  DEFAULT_AUDIT_MAX_AGE_MS,
  DEFAULT_AUDIT_MAX_ENTRIES,
  DEFAULT_AUDIT_PAGE,
  type JsonObject,
  keepsAudit,
  MAX_AUDIT_DETAILS_BYTES,
  MAX_AUDIT_NOTE_LENGTH,
  MAX_AUDIT_PAGE,
  type ScheduleReplaceAction,
} from './audit-log.js';
export { AuditNotKeptError } from './audit-not-kept-error.js';
export {
  pauseAuditRecord,
  replaceAuditAction,
  runRequestAuditRecord,
  scheduleAuditRecord,
} from './audit-records.js';
export { MemoryAudit } from './memory-audit.js';
