import {
  DuplicateScheduleError,
  type Logger,
  type ScheduleChange,
  ScheduleConflictError,
  type ScheduleDefinition,
  type SchedulePage,
  type ScheduleQuery,
  type ScheduleStore,
  type ScheduleWrite,
  type StoredSchedule,
  UnknownScheduleError,
} from '@fleetcron/core';
import {
  assertExpectedVersion,
  assertWriter,
  checkScheduleId,
  encodeScheduleCursor,
  normalizeScheduleDefinition,
  replaceAuditAction,
  scheduleQuery,
} from '@fleetcron/core/backend';
import type { SqliteExecutor } from '@fleetcron/sqlite-shared';
import { type AuditBounds, scheduleAuditArgs } from './audit-args.js';
import type { ScheduleAuditArgs } from './audit-operations.js';
import { ScheduleChangePoller } from './schedule-change-poller.js';
import type {
  ScheduleChangesResult,
  ScheduleListArgs,
  ScheduleRemoveArgs,
  ScheduleRow,
  ScheduleWriteArgs,
  ScheduleWriteResult,
} from './schedule-operations.js';

/**
 * The {@link ScheduleStore} of `SqliteStore`: one table, every write one `BEGIN IMMEDIATE`
 * transaction that checks the version and bumps the change counter with the row; changes reach
 * other processes by polling that counter (`ScheduleChangePoller`). Input is checked here, on the
 * caller's thread (core's checks), before anything is sent to the connection. A write that is
 * written appends its audit entry in the same transaction (`appendAudit`); a refused one none.
 */
export class SqliteSchedules implements ScheduleStore {
  private readonly poller: ScheduleChangePoller;

  constructor(
    private readonly executor: SqliteExecutor,
    pollMs: number,
    logger: Logger,
    private readonly audit: AuditBounds,
  ) {
    this.poller = new ScheduleChangePoller(
      (after, limit) => executor.run<ScheduleChangesResult>('scheduleChanges', { after, limit }),
      pollMs,
      logger,
    );
  }

  async createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const def = normalizeScheduleDefinition(definition);
    const by = assertWriter(write);
    const audit = scheduleAuditArgs('schedule.create', write, this.audit);
    const result = await this.write('createSchedule', writeArgs(id, def, by, null, audit));
    if ('written' in result) return toSchedule(result.written);
    throw new DuplicateScheduleError(id);
  }

  async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const def = normalizeScheduleDefinition(definition);
    const by = assertWriter(write);
    assertExpectedVersion(write.expectedVersion);
    const audit = scheduleAuditArgs(replaceAuditAction(write), write, this.audit);
    const result = await this.write(
      'replaceSchedule',
      writeArgs(id, def, by, write.expectedVersion, audit),
    );
    if ('written' in result) return toSchedule(result.written);
    throw whyNot(id, write.expectedVersion, result.refused);
  }

  async removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const by = assertWriter(write);
    const expected = write.expectedVersion ?? null;
    if (expected !== null) assertExpectedVersion(expected);
    const audit = scheduleAuditArgs('schedule.remove', write, this.audit);
    const args: ScheduleRemoveArgs = { id, by, expected, audit };
    const result = await this.write('removeSchedule', args);
    if ('written' in result) return toSchedule(result.written);
    throw whyNot(id, expected, result.refused);
  }

  async getSchedule(id: string): Promise<StoredSchedule | null> {
    checkScheduleId(id);
    const row = await this.executor.run<ScheduleRow | null>('getSchedule', id);
    return row && row.removed === 0 ? toSchedule(row) : null;
  }

  async listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    const { limit, handler, after } = scheduleQuery(query);
    const args: ScheduleListArgs = { handler, after, limit: limit + 1 };
    const rows = await this.executor.run<ScheduleRow[]>('listSchedules', args);
    const schedules = rows.slice(0, limit).map(toSchedule);
    const last = schedules.at(-1);
    return {
      schedules,
      nextCursor: rows.length > limit && last ? encodeScheduleCursor(last.id) : null,
    };
  }

  /** Polls the change counter while anyone watches (see `ScheduleChangePoller`). */
  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return this.poller.watch(listener);
  }

  /** Stops polling (the store is closing). */
  close(): void {
    this.poller.close();
  }

  private write(
    op: string,
    args: ScheduleWriteArgs | ScheduleRemoveArgs,
  ): Promise<ScheduleWriteResult> {
    return this.executor.run<ScheduleWriteResult>(op, args);
  }
}

function writeArgs(
  id: string,
  def: ScheduleDefinition,
  by: string,
  expected: number | null,
  audit: ScheduleAuditArgs,
): ScheduleWriteArgs {
  return {
    id,
    handler: def.handler,
    trigger: JSON.stringify(def.trigger),
    data: JSON.stringify(def.data),
    enabled: def.enabled ? 1 : 0,
    options: JSON.stringify(def.options),
    by,
    expected,
    audit,
  };
}

/** The error of a versioned write the store refused, from the row read in its transaction. */
function whyNot(id: string, expected: number | null, row: ScheduleRow | null): Error {
  if (!row || (row.removed === 1 && expected === null)) return new UnknownScheduleError(id);
  return new ScheduleConflictError(id, expected ?? 0, row.removed === 1 ? null : row.version);
}

function toSchedule(row: ScheduleRow): StoredSchedule {
  return {
    id: row.id,
    handler: row.handler,
    trigger: JSON.parse(row.trigger),
    data: JSON.parse(row.data),
    enabled: row.enabled === 1,
    options: JSON.parse(row.options),
    version: row.version,
    createdAt: row.created_at,
    createdBy: row.created_by,
    updatedAt: row.updated_at,
    updatedBy: row.updated_by,
  };
}
