/**
 * The stored-schedule operations of the SQLite store, run on the store's connection (worker
 * thread, or inline on your `Database`). Every write is one `BEGIN IMMEDIATE` transaction: SQLite
 * serialises writers, so the version check and the write cannot be split by another process,
 * and the write sets the row's `change_seq` (the change counter watchers poll) in the same
 * statement. A write that is refused answers the row as it is (read in the same transaction) so
 * the caller can say why. Times are the host's clock. Only type imports from outside, and
 * `statementCache` from its own entry: the worker thread loads this file by URL.
 */
import type { SqliteDatabase } from '@fleetcron/sqlite-shared';
import { statementCache } from '@fleetcron/sqlite-shared/statement-cache';
import { type AuditArgs, appendAudit, type ScheduleAuditArgs } from './audit-operations.js';

/** A row of `fleetcron_schedules`. */
export interface ScheduleRow {
  id: string;
  handler: string;
  trigger: string;
  data: string;
  enabled: number;
  options: string;
  version: number;
  removed: number;
  created_at: number;
  created_by: string;
  updated_at: number;
  updated_by: string;
}

/** A definition as written: JSON already encoded by the caller, `enabled` as 0 or 1. */
export interface ScheduleWriteArgs {
  id: string;
  handler: string;
  trigger: string;
  data: string;
  enabled: number;
  options: string;
  by: string;
  /** The version the caller read (`replaceSchedule`); `null` for `createSchedule`. */
  expected: number | null;
  /** The audit entry of the write (appended only when it is written). */
  audit: ScheduleAuditArgs;
}

/** What `removeSchedule` takes: who, and the version read (`null`: any). */
export interface ScheduleRemoveArgs {
  id: string;
  by: string;
  expected: number | null;
  /** The audit entry of the removal (appended only when it is removed). */
  audit: ScheduleAuditArgs;
}

/** What a write answers: the row written (as it was, for a remove), or the row that refused it. */
export type ScheduleWriteResult = { written: ScheduleRow } | { refused: ScheduleRow | null };

/** Arguments of `listSchedules`: rows to read (page size + 1), filter and position. */
export interface ScheduleListArgs {
  handler: string | null;
  after: string | null;
  limit: number;
}

/** What a poll of the change counter answers. */
export interface ScheduleChangesResult {
  /** The counter: the largest `change_seq` in the file (0 when no schedule was ever written). */
  head: number;
  /** Changes after the asked position, oldest first, at most `limit`. */
  changes: { id: string; seq: number }[];
}

const COLUMNS = `id, handler, trigger, data, enabled, options, version, removed, created_at,
  created_by, updated_at, updated_by`;

/** The next value of the change counter, read inside the writing statement. */
const NEXT_SEQ = '(SELECT coalesce(max(change_seq), 0) + 1 FROM fleetcron_schedules)';

function prepare(db: SqliteDatabase) {
  const get = db.prepare<[string], ScheduleRow>(
    `SELECT ${COLUMNS} FROM fleetcron_schedules WHERE id = ?`,
  );
  const create = db.prepare<[Record<string, unknown>], ScheduleRow>(
    `INSERT INTO fleetcron_schedules (id, handler, trigger, data, enabled, options, version,
       removed, created_at, created_by, updated_at, updated_by, change_seq)
     VALUES (@id, @handler, @trigger, @data, @enabled, @options, 1, 0, @now, @by, @now, @by,
       ${NEXT_SEQ})
     ON CONFLICT (id) DO UPDATE SET handler = excluded.handler, trigger = excluded.trigger,
       data = excluded.data, enabled = excluded.enabled, options = excluded.options,
       version = fleetcron_schedules.version + 1, removed = 0,
       created_at = excluded.created_at, created_by = excluded.created_by,
       updated_at = excluded.updated_at, updated_by = excluded.updated_by,
       change_seq = excluded.change_seq
     WHERE fleetcron_schedules.removed = 1
     RETURNING ${COLUMNS}`,
  );
  const replace = db.prepare<[Record<string, unknown>], ScheduleRow>(
    `UPDATE fleetcron_schedules SET handler = @handler, trigger = @trigger, data = @data,
       enabled = @enabled, options = @options, version = version + 1,
       updated_at = @now, updated_by = @by, change_seq = ${NEXT_SEQ}
     WHERE id = @id AND version = @expected AND removed = 0
     RETURNING ${COLUMNS}`,
  );
  const remove = db.prepare<[Record<string, unknown>], ScheduleRow>(
    `UPDATE fleetcron_schedules SET removed = 1, version = version + 1,
       updated_at = @now, updated_by = @by, change_seq = ${NEXT_SEQ}
     WHERE id = @id AND removed = 0 AND (@expected IS NULL OR version = @expected)
     RETURNING id`,
  );
  const head = db.prepare<[], { head: number }>(
    'SELECT coalesce(max(change_seq), 0) AS head FROM fleetcron_schedules',
  );
  const changes = db.prepare<[number, number], { id: string; seq: number }>(
    `SELECT id, change_seq AS seq FROM fleetcron_schedules WHERE change_seq > ?
     ORDER BY change_seq LIMIT ?`,
  );
  /** Appends the audit entry of a written row (schedule, version after, details from it). */
  const audited = (row: ScheduleRow, args: WriteParams): ScheduleWriteResult => {
    appendAudit(db, scheduleAudit(row, args.audit), args.now);
    return { written: row };
  };
  return {
    get,
    create: db.transaction((args: WriteParams): ScheduleWriteResult => {
      const row = create.get(bindable(args));
      return row ? audited(row, args) : { refused: get.get(args.id) ?? null };
    }),
    replace: db.transaction((args: WriteParams): ScheduleWriteResult => {
      const row = replace.get(bindable(args));
      return row ? audited(row, args) : { refused: get.get(args.id) ?? null };
    }),
    /** Reads the row first (the answer is the schedule as it was), in the same transaction. */
    remove: db.transaction((args: WriteParams): ScheduleWriteResult => {
      const before = get.get(args.id) ?? null;
      return remove.get(bindable(args)) && before ? audited(before, args) : { refused: before };
    }),
    /** By id over the primary key (every handler) or the partial handler index (one). */
    listAll: db.prepare<[string, number], ScheduleRow>(
      `SELECT ${COLUMNS} FROM fleetcron_schedules WHERE removed = 0 AND id > ? ORDER BY id LIMIT ?`,
    ),
    listHandler: db.prepare<[string, string, number], ScheduleRow>(
      `SELECT ${COLUMNS} FROM fleetcron_schedules
       WHERE handler = ? AND removed = 0 AND id > ? ORDER BY id LIMIT ?`,
    ),
    /** The counter and the changes after a position, from one snapshot (one read transaction). */
    changes: db.transaction(
      (after: number, limit: number): ScheduleChangesResult => ({
        head: head.get()?.head ?? 0,
        changes: changes.all(after, limit).map(({ id, seq }) => ({ id, seq })),
      }),
    ),
  };
}

const statements = statementCache(prepare);

/** A row without the driver's extra fields (libsql adds `_metadata`). */
function plain(row: ScheduleRow): ScheduleRow {
  return {
    id: row.id,
    handler: row.handler,
    trigger: row.trigger,
    data: row.data,
    enabled: row.enabled,
    options: row.options,
    version: row.version,
    removed: row.removed,
    created_at: row.created_at,
    created_by: row.created_by,
    updated_at: row.updated_at,
    updated_by: row.updated_by,
  };
}

function answer(result: ScheduleWriteResult): ScheduleWriteResult {
  if ('written' in result) return { written: plain(result.written) };
  return { refused: result.refused ? plain(result.refused) : null };
}

/** A write's parameters: the caller's, the audit entry apart, and the host's now. */
type WriteParams = Record<string, unknown> & { id: string; now: number; audit: ScheduleAuditArgs };

const writeParams = (args: ScheduleWriteArgs | ScheduleRemoveArgs): WriteParams => ({
  ...args,
  now: Date.now(),
});

/** The statement parameters of a write (the audit entry is not one). */
function bindable({ audit: _audit, ...params }: WriteParams): Record<string, unknown> {
  return params;
}

/**
 * The entry of a written schedule: core's `scheduleAuditRecord` (job `schedule:<id>`, version
 * after, details handler / enabled / trigger), built from the row in the worker thread.
 */
function scheduleAudit(row: ScheduleRow, audit: ScheduleAuditArgs): AuditArgs {
  const details = {
    handler: row.handler,
    enabled: row.enabled === 1,
    trigger: JSON.parse(row.trigger),
  };
  return {
    ...audit,
    ...{ job: `schedule:${row.id}`, schedule: row.id, version: row.version },
    details: JSON.stringify(details),
  };
}

/** The schedule operations, by name, merged into `storeOperations`. */
export const scheduleOperations = {
  createSchedule: (db: SqliteDatabase, args: ScheduleWriteArgs): ScheduleWriteResult =>
    answer(statements(db).create.immediate(writeParams(args))),
  replaceSchedule: (db: SqliteDatabase, args: ScheduleWriteArgs): ScheduleWriteResult =>
    answer(statements(db).replace.immediate(writeParams(args))),
  removeSchedule: (db: SqliteDatabase, args: ScheduleRemoveArgs): ScheduleWriteResult =>
    answer(statements(db).remove.immediate(writeParams(args))),
  getSchedule: (db: SqliteDatabase, id: string): ScheduleRow | null => {
    const row = statements(db).get.get(id);
    return row ? plain(row) : null;
  },
  /** One page by id; `after` `null` starts at `''`, below every id (ids are never empty). */
  listSchedules: (db: SqliteDatabase, args: ScheduleListArgs): ScheduleRow[] => {
    const s = statements(db);
    const after = args.after ?? '';
    const rows =
      args.handler === null
        ? s.listAll.all(after, args.limit)
        : s.listHandler.all(args.handler, after, args.limit);
    return rows.map(plain);
  },
  /** The change counter and the changes after `after`, at most `limit`, from one snapshot. */
  scheduleChanges: (
    db: SqliteDatabase,
    args: { after: number; limit: number },
  ): ScheduleChangesResult => statements(db).changes(args.after, args.limit),
};
