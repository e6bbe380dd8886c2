import type {
  ScheduleChange,
  ScheduleDefinition,
  SchedulePage,
  ScheduleQuery,
  ScheduleStore,
  ScheduleWrite,
  StoredSchedule,
} from '@fleetcron/core';
import {
  DuplicateScheduleError,
  ScheduleConflictError,
  UnknownScheduleError,
} from '@fleetcron/core';
import {
  assertExpectedVersion,
  assertWriter,
  checkAuditNote,
  checkScheduleId,
  encodeScheduleCursor,
  normalizeScheduleDefinition,
  replaceAuditAction,
  scheduleQuery,
} from '@fleetcron/core/backend';
import { decodeText, encodeText, type StatementSet } from '@fleetcron/postgres-shared';
import { auditParameters } from './audit-statements.js';
import type { ChannelListener } from './channel-listener.js';
import type { ResolvedStoreOptions } from './options.js';
import type { ScheduleRow, ScheduleStatement } from './schedule-statements.js';

/**
 * The {@link ScheduleStore} of `PostgresStore`: one table, every write one statement that also
 * NOTIFYs the schedule channel (delivered at commit) and appends its audit entry (none when the
 * write is refused), push through one LISTEN connection with a
 * `resync` to the watchers each time LISTEN takes effect (first and after every reconnect).
 */
export class PostgresSchedules implements ScheduleStore {
  private readonly watchers = new Set<(change: ScheduleChange) => void>();

  constructor(
    private readonly statements: StatementSet<ScheduleStatement>,
    private readonly channel: string,
    private readonly listener: ChannelListener,
    private readonly audit: ResolvedStoreOptions['audit'],
  ) {}

  /** Tells every watcher to read everything again (LISTEN took effect on a new connection). */
  resyncWatchers(): void {
    for (const watcher of this.watchers) watcher({ kind: 'resync' });
  }

  async createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const def = normalizeScheduleDefinition(definition);
    const by = assertWriter(write);
    const [row] = await this.statements.run<ScheduleRow>('createSchedule', 'createSchedule', [
      ...definitionParameters(id, def),
      encodeText(by),
      this.channel,
      ...this.auditOf('schedule.create', write),
    ]);
    if (!row) throw new DuplicateScheduleError(id);
    return toSchedule(row);
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
    const [row] = await this.statements.run<ScheduleRow>('replaceSchedule', 'replaceSchedule', [
      ...definitionParameters(id, def),
      encodeText(by),
      write.expectedVersion,
      this.channel,
      ...this.auditOf(replaceAuditAction(write), write),
    ]);
    if (!row) throw await this.whyNot(id, write.expectedVersion);
    return toSchedule(row);
  }

  async removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const by = assertWriter(write);
    const expected = write.expectedVersion ?? null;
    if (expected !== null) assertExpectedVersion(expected);
    const [row] = await this.statements.run<ScheduleRow>('removeSchedule', 'removeSchedule', [
      id,
      encodeText(by),
      expected,
      this.channel,
      ...this.auditOf('schedule.remove', write),
    ]);
    if (!row) throw await this.whyNot(id, expected);
    return toSchedule(row);
  }

  /** The audit parameters of a write (`by` checked by `assertWriter` before; `note` here). */
  private auditOf(action: string, write: ScheduleWrite): unknown[] {
    return auditParameters({ action, by: write.by, note: checkAuditNote(write.note) }, this.audit);
  }

  async getSchedule(id: string): Promise<StoredSchedule | null> {
    checkScheduleId(id);
    const [row] = await this.statements.run<ScheduleRow>('getSchedule', 'getSchedule', [id], {
      retry: true,
    });
    return row && !row.removed ? toSchedule(row) : null;
  }

  async listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    const { limit, handler, after } = scheduleQuery(query);
    const rows = await this.statements.run<ScheduleRow>(
      'listSchedules',
      'listSchedules',
      [handler, after, limit + 1],
      { retry: true },
    );
    const schedules = rows.slice(0, limit).map(toSchedule);
    const last = schedules.at(-1);
    return {
      schedules,
      nextCursor: rows.length > limit && last ? encodeScheduleCursor(last.id) : null,
    };
  }

  /**
   * Push via LISTEN/NOTIFY: holds ONE pool connection while anyone watches (not through
   * transaction-mode poolers: there, notifications never arrive and readers poll).
   */
  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    this.watchers.add(listener);
    const stop = this.listener.subscribe((id) => listener({ kind: 'changed', id }));
    return () => {
      this.watchers.delete(listener);
      stop();
    };
  }

  /** The error of a versioned write that matched no row: a conflict or an unknown id. */
  private async whyNot(id: string, expected: number | null): Promise<Error> {
    const [row] = await this.statements.run<ScheduleRow>('getSchedule', 'getSchedule', [id], {
      retry: true,
    });
    if (!row || (row.removed && expected === null)) return new UnknownScheduleError(id);
    return new ScheduleConflictError(id, expected ?? 0, row.removed ? null : Number(row.version));
  }
}

function definitionParameters(id: string, def: ScheduleDefinition): unknown[] {
  return [
    id,
    def.handler,
    JSON.stringify(def.trigger),
    JSON.stringify(def.data),
    def.enabled,
    JSON.stringify(def.options),
  ];
}

function toSchedule(row: ScheduleRow): StoredSchedule {
  return {
    id: row.id,
    handler: row.handler,
    trigger: JSON.parse(row.trigger),
    data: JSON.parse(row.data),
    enabled: row.enabled,
    options: JSON.parse(row.options),
    version: Number(row.version),
    createdAt: Number(row.created_at),
    createdBy: decodeText(row.created_by),
    updatedAt: Number(row.updated_at),
    updatedBy: decodeText(row.updated_by),
  };
}
