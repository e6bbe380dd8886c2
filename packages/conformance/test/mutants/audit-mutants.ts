import {
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  MemoryStore,
  type PauseOptions,
  type RunRequest,
  type RunRequestInput,
  realClock,
  type ScheduleDefinition,
  type ScheduleWrite,
  type StoredSchedule,
} from '@fleetcron/core';
import {
  MemoryAudit,
  pauseAuditRecord,
  replaceAuditAction,
  runRequestAuditRecord,
  scheduleAuditRecord,
} from '@fleetcron/core/backend';

/**
 * A MemoryStore whose audit log is kept beside it by overridden mutations (the store's own log
 * is hidden behind `listAudit`): each mutant below breaks one rule of the audit contract.
 */
class SideLoggedStore extends MemoryStore {
  protected readonly log: MemoryAudit;

  constructor(maxEntries = 40) {
    super();
    this.log = new MemoryAudit(realClock, { maxEntries });
  }

  override async setPaused(job: string, paused: boolean, options?: PauseOptions): Promise<void> {
    await super.setPaused(job, paused, options);
    this.log.append(pauseAuditRecord(job, paused, options));
  }

  override async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = await super.requestRun(input);
    this.log.append(runRequestAuditRecord(request, input.note));
    return request;
  }

  override async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    const stored = await super.replaceSchedule(id, definition, write);
    this.log.append(scheduleAuditRecord(replaceAuditAction(write), stored, write));
    return stored;
  }

  override async createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    const stored = await super.createSchedule(id, definition, write);
    this.log.append(scheduleAuditRecord('schedule.create', stored, write));
    return stored;
  }

  override async removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    const stored = await super.removeSchedule(id, write);
    this.log.append(scheduleAuditRecord('schedule.remove', stored, write));
    return stored;
  }

  override listAudit(query?: AuditQuery): Promise<AuditPage> {
    return this.log.listAudit(query);
  }
}

/** The side-logged store as it should be: the mutants' base passes every audit scenario. */
export class SideLoggedReference extends SideLoggedStore {}

/**
 * (a1) Appends the entry outside the write's atomic step, before it: a stale (`SCHEDULE_CONFLICT`)
 * write leaves an entry for a change that never happened.
 */
export class AppendsBeforeWrite extends SideLoggedStore {
  override async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    const current = await this.getSchedule(id);
    if (current) {
      const guess = { ...current, ...definition, version: write.expectedVersion + 1 };
      this.log.append(scheduleAuditRecord(replaceAuditAction(write), guess, write));
    }
    return MemoryStore.prototype.replaceSchedule.call(this, id, definition, write);
  }
}

/** (a2) Drops the entry of a resume. */
export class DropsResume extends SideLoggedStore {
  override async setPaused(job: string, paused: boolean, options?: PauseOptions): Promise<void> {
    if (paused) return super.setPaused(job, paused, options);
    await MemoryStore.prototype.setPaused.call(this, job, paused, options);
  }
}

/** (a3) Loses the note of a run request. */
export class LosesRunNote extends SideLoggedStore {
  override async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = await MemoryStore.prototype.requestRun.call(this, input);
    this.log.append(runRequestAuditRecord(request, null));
    return request;
  }
}

/** (a4) Records every replace as `schedule.update` (ignores `write.action`). */
export class EverythingIsUpdate extends SideLoggedStore {
  override async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    return super.replaceSchedule(id, definition, { ...write, action: null });
  }
}

/** (a5) Never prunes: the log grows without a bound. */
export class Unbounded extends SideLoggedStore {
  constructor() {
    super(1_000_000);
  }
}

/** (a6) A page after a cursor starts with the cursor's own entry again. */
export class CursorRepeats extends SideLoggedStore {
  override async listAudit(query?: AuditQuery): Promise<AuditPage> {
    const page = await this.log.listAudit(query);
    if (!query?.cursor) return page;
    const whole = await readAll(this.log, { ...query, cursor: null });
    const first = page.entries[0];
    const at = first ? whole.findIndex((e) => e.id === first.id) : -1;
    return at > 0 ? { ...page, entries: [whole[at - 1]!, ...page.entries.slice(0, -1)] } : page;
  }
}

/** (a7) Lists oldest first. */
export class OldestFirst extends SideLoggedStore {
  override async listAudit(query?: AuditQuery): Promise<AuditPage> {
    const page = await this.log.listAudit(query);
    return { ...page, entries: [...page.entries].reverse() };
  }
}

async function readAll(log: MemoryAudit, query: AuditQuery): Promise<AuditEntry[]> {
  const all: AuditEntry[] = [];
  let cursor: string | null = null;
  do {
    const page = await log.listAudit({ ...query, cursor, limit: 1_000 });
    all.push(...page.entries);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}
