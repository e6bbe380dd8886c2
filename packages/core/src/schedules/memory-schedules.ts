import { replaceAuditAction, scheduleAuditRecord } from '../audit/audit-records.js';
import type { MemoryAudit } from '../audit/memory-audit.js';
import type { Clock } from '../clock.js';
import type { ScheduleDefinition, StoredSchedule } from './schedule.js';
import {
  DuplicateScheduleError,
  ScheduleConflictError,
  UnknownScheduleError,
} from './schedule-errors.js';
import {
  assertExpectedVersion,
  assertWriter,
  encodeScheduleCursor,
  type ScheduleChange,
  type SchedulePage,
  type ScheduleQuery,
  type ScheduleStore,
  type ScheduleWrite,
  scheduleQuery,
} from './schedule-store.js';
import { checkScheduleId, normalizeScheduleDefinition } from './validate-schedule.js';

/** A stored schedule or its tombstone (`removed`), in memory. */
interface Entry {
  schedule: StoredSchedule;
  removed: boolean;
}

/**
 * The reference {@link ScheduleStore} in process memory, used by `MemoryStore`. Writes apply at
 * once, in call order; watchers hear each change on a microtask after it.
 */
export class MemorySchedules implements ScheduleStore {
  private readonly entries = new Map<string, Entry>();
  private readonly watchers = new Set<(change: ScheduleChange) => void>();

  /**
   * @param audit where each write is recorded, in the same synchronous step as the write
   *   (`MemoryStore`'s log); none: not recorded.
   */
  constructor(
    private readonly clock: Clock,
    private readonly audit: MemoryAudit | null = null,
  ) {}

  async createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const def = normalizeScheduleDefinition(definition);
    const by = assertWriter(write);
    const entry = this.entries.get(id);
    if (entry && !entry.removed) throw new DuplicateScheduleError(id);
    const now = this.clock.now();
    const schedule: StoredSchedule = {
      id,
      ...def,
      version: (entry?.schedule.version ?? 0) + 1,
      createdAt: now,
      createdBy: by,
      updatedAt: now,
      updatedBy: by,
    };
    this.audit?.append(scheduleAuditRecord('schedule.create', schedule, write));
    return this.put(schedule, false);
  }

  async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const def = normalizeScheduleDefinition(definition);
    const by = assertWriter(write);
    const action = replaceAuditAction(write);
    const current = this.current(id, write.expectedVersion);
    const schedule: StoredSchedule = {
      ...current,
      ...def,
      version: current.version + 1,
      updatedAt: this.clock.now(),
      updatedBy: by,
    };
    this.audit?.append(scheduleAuditRecord(action, schedule, write));
    return this.put(schedule, false);
  }

  async removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const by = assertWriter(write);
    const current = this.current(id, write.expectedVersion);
    this.audit?.append(scheduleAuditRecord('schedule.remove', current, write));
    this.put(
      { ...current, version: current.version + 1, updatedAt: this.clock.now(), updatedBy: by },
      true,
    );
    return structuredClone(current);
  }

  async getSchedule(id: string): Promise<StoredSchedule | null> {
    checkScheduleId(id);
    const entry = this.entries.get(id);
    return entry && !entry.removed ? structuredClone(entry.schedule) : null;
  }

  async listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    const { limit, handler, after } = scheduleQuery(query);
    const ids = [...this.entries.keys()]
      .filter((id) => after === null || id > after)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const schedules: StoredSchedule[] = [];
    let more = false;
    for (const id of ids) {
      const entry = this.entries.get(id)!;
      if (entry.removed || (handler !== null && entry.schedule.handler !== handler)) continue;
      if (schedules.length === limit) {
        more = true;
        break;
      }
      schedules.push(structuredClone(entry.schedule));
    }
    const last = schedules.at(-1);
    return { schedules, nextCursor: more && last ? encodeScheduleCursor(last.id) : null };
  }

  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    this.watchers.add(listener);
    return () => {
      this.watchers.delete(listener);
    };
  }

  /** The live schedule `id` at `expected` (any version when `null`), or the typed error. */
  private current(id: string, expected: number | null): StoredSchedule {
    if (expected !== null) assertExpectedVersion(expected);
    const entry = this.entries.get(id);
    if (!entry) throw new UnknownScheduleError(id);
    if (entry.removed) {
      if (expected === null) throw new UnknownScheduleError(id);
      throw new ScheduleConflictError(id, expected, null);
    }
    if (expected !== null && entry.schedule.version !== expected) {
      throw new ScheduleConflictError(id, expected, entry.schedule.version);
    }
    return entry.schedule;
  }

  private put(schedule: StoredSchedule, removed: boolean): StoredSchedule {
    this.entries.set(schedule.id, { schedule: structuredClone(schedule), removed });
    const change: ScheduleChange = { kind: 'changed', id: schedule.id };
    for (const watcher of this.watchers) {
      queueMicrotask(() => {
        try {
          watcher(change);
        } catch {
          // a throwing watcher is its own problem; the write stands
        }
      });
    }
    return structuredClone(schedule);
  }
}
