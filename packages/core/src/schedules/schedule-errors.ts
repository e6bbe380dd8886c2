import { FleetcronError } from '../errors.js';

/**
 * A versioned write of a stored schedule lost a race (code `SCHEDULE_CONFLICT`, field
 * `expectedVersion`): the schedule is no longer at the version the caller read. Nothing was
 * written. Read it again (`actualVersion` is what the store holds, `null` when it was removed),
 * re-apply the change, and write with the new version.
 */
export class ScheduleConflictError extends FleetcronError {
  /** The schedule's id. */
  readonly id: string;
  /** The version the caller expected. */
  readonly expectedVersion: number;
  /** The version the store holds, `null` when the schedule is gone. */
  readonly actualVersion: number | null;
  constructor(id: string, expectedVersion: number, actualVersion: number | null) {
    const now =
      actualVersion === null ? 'it has been removed' : `it is at version ${actualVersion}`;
    super(
      'SCHEDULE_CONFLICT',
      `expectedVersion: schedule ${JSON.stringify(id)} was changed by someone else (expected version ${expectedVersion}, ${now}); nothing was written. Read it again and retry with its current version.`,
      { field: 'expectedVersion' },
    );
    this.id = id;
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
  }
}

/** No stored schedule has this id (code `UNKNOWN_SCHEDULE`, field `id`). */
export class UnknownScheduleError extends FleetcronError {
  /** The id asked for. */
  readonly id: string;
  constructor(id: string) {
    super(
      'UNKNOWN_SCHEDULE',
      `id: no schedule ${JSON.stringify(id)} is stored (never created, or removed); list the schedules to find its id.`,
      { field: 'id' },
    );
    this.id = id;
  }
}

/** `create` with the id of a schedule that exists (code `DUPLICATE_SCHEDULE`, field `id`). */
export class DuplicateScheduleError extends FleetcronError {
  /** The id that is taken. */
  readonly id: string;
  constructor(id: string) {
    super(
      'DUPLICATE_SCHEDULE',
      `id: a schedule ${JSON.stringify(id)} already exists; update it (with its version) or pick another id.`,
      { field: 'id' },
    );
    this.id = id;
  }
}
