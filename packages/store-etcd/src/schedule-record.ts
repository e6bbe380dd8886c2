import type { StoredSchedule } from '@fleetcron/core';

/**
 * What `s/<id>` holds: the stored schedule as JSON, with `removed: true` on a tombstone (a
 * removed schedule keeps its key, so its version goes on when the id is created again).
 */
export interface ScheduleRecord extends StoredSchedule {
  removed: boolean;
}

/** The JSON value of a schedule key. */
export function encodeScheduleRecord(record: ScheduleRecord): string {
  return JSON.stringify(record);
}

/** A schedule key's value, read back. */
export function decodeScheduleRecord(value: Buffer | string): ScheduleRecord {
  return JSON.parse(value.toString()) as ScheduleRecord;
}

/** The stored schedule of a record (the `removed` flag left out). */
export function scheduleOf(record: ScheduleRecord): StoredSchedule {
  const { removed: _removed, ...schedule } = record;
  return schedule;
}
