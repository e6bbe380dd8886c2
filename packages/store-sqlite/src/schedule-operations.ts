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
}

/** What `removeSchedule` takes: who, and the version read (`null`: any). */
export interface ScheduleRemoveArgs {
  id: string;
  by: string;
  expected: number | null;
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
  return {
    get,
    create: db.transaction((args: Record<string, unknown>): ScheduleWriteResult => {
      const row = create.get(args);
      return row ? { written: row } : { refused: get.get(args.id as string) ?? null };
    }),
    replace: db.transaction((args: Record<string, unknown>): ScheduleWriteResult => {
      const row = replace.get(args);
      return row ? { written: row } : { refused: get.get(args.id as string) ?? null };
    }),
    /** Reads the row first (the answer is the schedule as it was), in the same transaction. */
    remove: db.transaction((args: Record<string, unknown>): ScheduleWriteResult => {
      const before = get.get(args.id as string) ?? null;
      return remove.get(args) && before ? { written: before } : { refused: before };
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

const writeParams = (args: ScheduleWriteArgs | ScheduleRemoveArgs): Record<string, unknown> => ({
  ...args,
  now: Date.now(),
});

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
