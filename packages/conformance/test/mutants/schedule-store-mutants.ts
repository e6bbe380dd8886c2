import {
  MemoryStore,
  type ScheduleDefinition,
  type ScheduleWrite,
  type StoredSchedule,
} from '@fleetcron/core';

/** (sc1) Forgets a removed schedule's version: an id created again starts at 1. */
export class ForgetsTombstones extends MemoryStore {
  override async createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    const created = await super.createSchedule(id, definition, write);
    return { ...created, version: 1 };
  }
}

/** (sc2) Checks the version, then writes a moment later: two writers from one version both win. */
export class ChecksThenWrites extends MemoryStore {
  override async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    const read = await this.getSchedule(id);
    if (read?.version !== write.expectedVersion) {
      return super.replaceSchedule(id, definition, write); // the store's own conflict error
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    const now = await this.getSchedule(id);
    return super.replaceSchedule(id, definition, { ...write, expectedVersion: now!.version });
  }
}

/** (sc3) Does not move the version on replace: servers take the change for one they have. */
export class KeepsVersion extends MemoryStore {
  private readonly base = new Map<string, number>();
  override async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    const written = await super.replaceSchedule(id, definition, {
      ...write,
      expectedVersion: write.expectedVersion + (this.base.get(id) ?? 0),
    });
    this.base.set(id, (this.base.get(id) ?? 0) + 1);
    return { ...written, version: written.version - (this.base.get(id) ?? 0) };
  }
  override async getSchedule(id: string): Promise<StoredSchedule | null> {
    const s = await super.getSchedule(id);
    return s && { ...s, version: s.version - (this.base.get(id) ?? 0) };
  }
  override async listSchedules(query?: Parameters<MemoryStore['listSchedules']>[0]) {
    const page = await super.listSchedules(query);
    return {
      ...page,
      schedules: page.schedules.map((s) => ({
        ...s,
        version: s.version - (this.base.get(s.id) ?? 0),
      })),
    };
  }
}
