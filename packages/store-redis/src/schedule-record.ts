import type { ScheduleDefinition, StoredSchedule } from '@fleetcron/core';

/** A stored schedule as read from its record, with whether it is a tombstone. */
export interface ScheduleRecord {
  schedule: StoredSchedule;
  removed: boolean;
}

/** The definition part of a record: JSON written by the client, never parsed by the scripts. */
export function encodeScheduleDefinition(def: ScheduleDefinition): string {
  return JSON.stringify({
    trigger: def.trigger,
    data: def.data,
    enabled: def.enabled,
    options: def.options,
  });
}

/**
 * Reads a record `<header JSON>\n<definition JSON>` of schedule `id` (see `schedule-scripts.ts`
 * for the header). @throws Error when the value is not a schedule record (not written by this
 * store).
 */
export function decodeScheduleRecord(id: string, record: string): ScheduleRecord {
  const newline = record.indexOf('\n');
  if (newline < 0) throw new Error(`schedule ${JSON.stringify(id)}: not a schedule record`);
  const [version, removed, createdAt, createdBy, updatedAt, updatedBy, handler] = JSON.parse(
    record.slice(0, newline),
  ) as [number, 0 | 1, number, string, number, string, string];
  const def = JSON.parse(record.slice(newline + 1)) as Omit<ScheduleDefinition, 'handler'>;
  return {
    removed: removed === 1,
    schedule: {
      id,
      handler,
      trigger: def.trigger,
      data: def.data,
      enabled: def.enabled,
      options: def.options,
      version,
      createdAt,
      createdBy,
      updatedAt,
      updatedBy,
    },
  };
}
