import type { JsonValue } from '../schedules/schedule.js';

/**
 * The audit log: every mutation of a fleet (pause, resume, run request, stored-schedule change)
 * as the store recorded it, in the same atomic step as the mutation itself. A store keeps it when
 * it has {@link AuditStore.listAudit} ({@link keepsAudit}); such a store records an entry from
 * `setPaused`, `requestRun`, `createSchedule`, `replaceSchedule` and `removeSchedule` (and from
 * later mutations, under their own {@link AuditAction}) inside the mutation's transaction, Lua
 * script or txn: a mutation that happened always has its entry, an entry never describes a
 * mutation that did not happen (a stale `SCHEDULE_CONFLICT` write leaves none).
 */

/**
 * What was done. Stores keep the action as text and return it as stored, so actions added later
 * (those listed without a producer today are reserved for them) need no store change.
 *
 * - `pause` / `resume`: `setPaused(job, true | false)`.
 * - `run`: `requestRun` (the entry's `requestId` is the request's id).
 * - `schedule.create` / `schedule.update` / `schedule.enable` / `schedule.disable` /
 *   `schedule.remove`: stored-schedule writes (`schedule` and `version` set).
 * - `backfill`, `alert.acknowledge`: reserved for the backfill and alert features.
 */
export type AuditAction =
  | 'pause'
  | 'resume'
  | 'run'
  | 'schedule.create'
  | 'schedule.update'
  | 'schedule.enable'
  | 'schedule.disable'
  | 'schedule.remove'
  | 'backfill'
  | 'alert.acknowledge';

/** Every {@link AuditAction}, in the order above. */
export const AUDIT_ACTIONS: readonly AuditAction[] = [
  'pause',
  'resume',
  'run',
  'schedule.create',
  'schedule.update',
  'schedule.enable',
  'schedule.disable',
  'schedule.remove',
  'backfill',
  'alert.acknowledge',
];

/** The schedule actions a `replaceSchedule` may record (see `ScheduleWrite.action`). */
export type ScheduleReplaceAction = 'schedule.update' | 'schedule.enable' | 'schedule.disable';

/** A JSON object (the `details` of an entry). */
export type JsonObject = { [key: string]: JsonValue };

/**
 * What a store records for one mutation, before it stamps it ({@link AuditEntry} without `id`
 * and `at`). Built by core (`pauseAuditRecord`, `runRequestAuditRecord`, `scheduleAuditRecord`)
 * so every store records the same fields for the same call.
 */
export interface AuditRecord {
  action: AuditAction;
  /** The job it concerns; for a stored schedule its Scheduler job `schedule:<id>`. */
  job: string;
  /** Who did it (`alice`, `cli`, `admin:alice`), at most `MAX_ACTOR_LENGTH` characters; `null` when the caller did not say. */
  by: string | null;
  /** Why, as the caller wrote it: at most {@link MAX_AUDIT_NOTE_LENGTH} characters; `null` without one. */
  note: string | null;
  /** The run request's id, for `run`; else `null`. */
  requestId: string | null;
  /** The stored schedule's id, for the `schedule.*` actions; else `null`. */
  schedule: string | null;
  /** The schedule's version after the change (for `schedule.remove`: the version removed); else `null`. */
  version: number | null;
  /** More about the action, plain JSON of at most {@link MAX_AUDIT_DETAILS_BYTES}; `null` without. */
  details: JsonObject | null;
}

/** One entry of the audit log, as {@link AuditStore.listAudit} returns it. */
export interface AuditEntry extends AuditRecord {
  /** The entry's id: unique in the store, opaque (a sequence number as text in the SQL stores). */
  id: string;
  /** When the mutation was stored, epoch ms, on the store's clock where it has one. */
  at: number;
}

/** Options of {@link AuditStore.listAudit}. */
export interface AuditQuery {
  /** Only entries of this job (a stored schedule's job is `schedule:<id>`). */
  job?: string | null;
  /** Only these actions. */
  action?: AuditAction | readonly AuditAction[] | null;
  /** Only entries stored before this time (epoch ms, exclusive). */
  before?: number | null;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
  /** Page size, 1 to {@link MAX_AUDIT_PAGE}. Default {@link DEFAULT_AUDIT_PAGE}. */
  limit?: number;
}

/** One page of the audit log, newest first. */
export interface AuditPage {
  entries: AuditEntry[];
  /** Pass as `cursor` for the next (older) page; `null` on the last page. */
  nextCursor: string | null;
}

/**
 * The audit part of a Store: OPTIONAL on `Store` (as fleet control and schedules are), so a
 * store written before it keeps working; `FleetClient` then says that no audit log is kept. A
 * store that has it records every mutation as described in this module's comment, and keeps a
 * bounded log (see {@link AuditRetention}: by default the newest 100,000 entries of at most 90
 * days, older ones pruned with bounded work as entries are appended).
 */
export interface AuditStore {
  /**
   * One page of the audit log, newest first (in the order the store appended the entries),
   * optionally of one job, some actions, before a time. @throws InvalidOptionError for a bad
   * query (`limit`, `cursor`, `action`, `before`, `job`).
   */
  listAudit(query?: AuditQuery): Promise<AuditPage>;
}

/** Whether `store` keeps an audit log ({@link AuditStore.listAudit}). */
export function keepsAudit<S extends object>(store: S): store is S & AuditStore {
  return typeof (store as Record<string, unknown>).listAudit === 'function';
}

/** How much audit log a store keeps: option `audit` of every built-in store. */
export interface AuditRetention {
  /** Keep at most this many newest entries. Default {@link DEFAULT_AUDIT_MAX_ENTRIES}. */
  maxEntries?: number;
  /** Keep entries at most this old, ms (store clock). Default {@link DEFAULT_AUDIT_MAX_AGE_MS}. */
  maxAgeMs?: number;
}

/** Default {@link AuditRetention.maxEntries}: 100,000 entries. */
export const DEFAULT_AUDIT_MAX_ENTRIES = 100_000;
/** Default {@link AuditRetention.maxAgeMs}: 90 days. */
export const DEFAULT_AUDIT_MAX_AGE_MS = 90 * 24 * 60 * 60 * 1000;
/**
 * Most entries a store deletes when it appends one (the bounded work of pruning): the log
 * shrinks to its bound within `excess / (AUDIT_PRUNE_BATCH - 1)` appends after a bound is lowered.
 */
export const AUDIT_PRUNE_BATCH = 20;
/** Longest note, characters (as admin's `note`). */
export const MAX_AUDIT_NOTE_LENGTH = 1_000;
/** Longest `details`, bytes of UTF-8 JSON. */
export const MAX_AUDIT_DETAILS_BYTES = 4 * 1024;
/** Default page size of {@link AuditStore.listAudit}. */
export const DEFAULT_AUDIT_PAGE = 100;
/** Largest page size of {@link AuditStore.listAudit}. */
export const MAX_AUDIT_PAGE = 1_000;
