/**
 * Run requests, exactly once (core's `FleetStore`): stored, taken under a lease, decided by the
 * current take, released, read. Every write is one `BEGIN IMMEDIATE` transaction (or one
 * statement) on the store's connection: SQLite lets one writer in at a time across the host's
 * processes, so a take and a decision cannot interleave with another. One host, one clock:
 * `requestedAt`, `takenUntil` and `decidedAt` are `Date.now()` in the connection's thread. Only
 * type imports from outside (and `node:crypto`), and `statementCache` from its own entry: the
 * worker thread loads this file by URL.
 */
import { randomUUID } from 'node:crypto';
import type { SqliteDatabase } from '@fleetcron/sqlite-shared';
import { statementCache } from '@fleetcron/sqlite-shared/statement-cache';
import { type AuditArgs, appendAudit } from './audit-operations.js';

/** A run request as the connection reads and writes it: `data` as JSON text, `null` for none. */
export interface RunRequestRecord {
  id: string;
  job: string;
  requestedBy: string;
  requestedAt: number;
  data: string | null;
}

/** A request a take returns: the record and this take. */
export interface TakenRunRequestRecord extends RunRequestRecord {
  takeId: string;
  takenUntil: number;
  takes: number;
}

/** A request as `getRunRequest` reads it (its `state` is worked out by `SqliteStore`). */
export interface RunRequestStateRecord extends RunRequestRecord {
  takes: number;
  takenBy: string | null;
  takenUntil: number | null;
  decidedAt: number | null;
  fireAt: number | null;
  decidedBy: string | null;
}

/** Arguments of `takeRunRequests` (checked by `SqliteStore`). */
export interface TakeArgs {
  jobs: string[];
  instanceId: string;
  leaseMs: number;
  /** Decided requests older than this are collected (core's `DECIDED_RUN_REQUEST_KEEP_MS`). */
  keepMs: number;
}

/** Arguments of `decideRunRequest`. */
export interface DecideArgs {
  id: string;
  takeId: string;
  fireAt: number;
  decidedBy: string;
}

/** Most decided requests one take deletes (bounded work per take; the rest wait for the next). */
export const COLLECT_PER_TAKE = 100;

const REQUEST_COLUMNS =
  'id, job, requested_by AS requestedBy, requested_at AS requestedAt, data, takes';

function prepare(db: SqliteDatabase) {
  const insertRequest = db.prepare(
    `INSERT INTO fleetcron_run_requests (id, job, requested_by, requested_at, data)
     VALUES (@id, @job, @requestedBy, @requestedAt, @data)`,
  );
  const collect = db.prepare(
    `DELETE FROM fleetcron_run_requests WHERE seq IN (
       SELECT seq FROM fleetcron_run_requests
       WHERE decided_at IS NOT NULL AND decided_at < @now - @keepMs LIMIT ${COLLECT_PER_TAKE})`,
  );
  const takeable = db.prepare<
    [{ jobs: string; now: number }],
    RunRequestRecord & { seq: number; takes: number }
  >(
    `SELECT seq, ${REQUEST_COLUMNS} FROM fleetcron_run_requests
     WHERE job IN (SELECT value FROM json_each(@jobs)) AND decided_at IS NULL
       AND (taken_until IS NULL OR taken_until <= @now)
     ORDER BY seq`,
  );
  const hold = db.prepare(
    `UPDATE fleetcron_run_requests
     SET takes = takes + 1, take_id = @takeId, taken_by = @takenBy, taken_until = @takenUntil
     WHERE seq = @seq`,
  );
  const current = db.prepare<[string], { take_id: string | null; decided_at: number | null }>(
    'SELECT take_id, decided_at FROM fleetcron_run_requests WHERE id = ?',
  );
  const decide = db.prepare(
    `UPDATE fleetcron_run_requests SET decided_at = @now, fire_at = @fireAt, decided_by = @decidedBy
     WHERE id = @id`,
  );
  return {
    request: db.transaction((request: RunRequestRecord, audit: AuditArgs) => {
      insertRequest.run(request);
      appendAudit(db, audit, request.requestedAt);
    }),
    /** Collects old decisions, then holds every takeable request of the jobs for this take. */
    take: db.transaction((args: TakeArgs, now: number): TakenRunRequestRecord[] => {
      collect.run({ now, keepMs: args.keepMs });
      const takenUntil = now + args.leaseMs;
      return takeable.all({ jobs: JSON.stringify(args.jobs), now }).map(({ seq, ...row }) => {
        const takeId = randomUUID();
        hold.run({ seq, takeId, takenBy: args.instanceId, takenUntil });
        return { ...row, takeId, takenUntil, takes: row.takes + 1 };
      });
    }),
    /** Compare-and-set on the current take: decides it, or answers an earlier decision of it. */
    decide: db.transaction((args: DecideArgs, now: number): boolean => {
      const row = current.get(args.id);
      if (!row || row.take_id !== args.takeId) return false;
      if (row.decided_at === null) decide.run({ ...args, now });
      return true;
    }),
    release: db.prepare(
      `UPDATE fleetcron_run_requests SET taken_until = NULL
       WHERE id = @id AND take_id = @takeId AND decided_at IS NULL`,
    ),
    get: db.prepare<[string], RunRequestStateRecord>(
      `SELECT ${REQUEST_COLUMNS}, taken_by AS takenBy, taken_until AS takenUntil,
         decided_at AS decidedAt, fire_at AS fireAt, decided_by AS decidedBy
       FROM fleetcron_run_requests WHERE id = ?`,
    ),
  };
}

const statements = statementCache(prepare);

/** The run-request operations, by name, merged into `storeOperations`. */
export const runRequestOperations = {
  /** Stores the request, `requestedAt` stamped with the host clock here. */
  /** One `BEGIN IMMEDIATE` transaction: the request and its audit entry. */
  requestRun: (
    db: SqliteDatabase,
    { audit, ...request }: RunRequestRecord & { audit: AuditArgs },
  ): RunRequestRecord => {
    const stamped = { ...request, requestedAt: Date.now() };
    statements(db).request.immediate(stamped, audit);
    return stamped;
  },
  /** One `BEGIN IMMEDIATE` transaction: collect, read the takeable requests, hold each. */
  takeRunRequests: (db: SqliteDatabase, args: TakeArgs): TakenRunRequestRecord[] =>
    statements(db).take.immediate(args, Date.now()),
  /** One `BEGIN IMMEDIATE` transaction: read the current take and decision, decide if free. */
  decideRunRequest: (db: SqliteDatabase, args: DecideArgs): boolean =>
    statements(db).decide.immediate(args, Date.now()),
  /** One `UPDATE` guarded by the take and the decision: a no-op when either does not match. */
  releaseRunRequest: (db: SqliteDatabase, args: { id: string; takeId: string }): void => {
    statements(db).release.run(args);
  },
  getRunRequest: (db: SqliteDatabase, id: string): RunRequestStateRecord | null =>
    statements(db).get.get(id) ?? null,
};
