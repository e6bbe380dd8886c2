import { InvalidOptionError } from '../errors.js';
import type { PauseOptions, RunRequest } from '../registry.js';
import { type StoredSchedule, scheduleJobName } from '../schedules/schedule.js';
import { boundActor, checkAuditNote } from './audit-input.js';
import type { AuditRecord, ScheduleReplaceAction } from './audit-log.js';

/**
 * The entry `setPaused(job, paused, options)` records. Checks `by` (optional, bounded by `boundActor`) and
 * `note` first: a store calls it before it writes, so bad input stores nothing.
 *
 * @throws InvalidOptionError (`by`, `note`).
 */
export function pauseAuditRecord(
  job: string,
  paused: boolean,
  options: PauseOptions | undefined,
): AuditRecord {
  const by = options?.by === undefined || options.by === null ? null : boundActor('by', options.by);
  return {
    ...{ action: paused ? 'pause' : 'resume', job, by, note: checkAuditNote(options?.note) },
    ...{ requestId: null, schedule: null, version: null, details: null },
  };
}

/**
 * The entry a stored run request records, `note` from its input (`RunRequestInput.note`).
 * @throws InvalidOptionError (`note`).
 */
export function runRequestAuditRecord(request: RunRequest, note: unknown): AuditRecord {
  return {
    ...{ action: 'run', job: request.job, by: request.requestedBy, note: checkAuditNote(note) },
    ...{ requestId: request.id, schedule: null, version: null, details: null },
  };
}

/**
 * The entry a stored-schedule write records: `schedule` and `version` of the schedule after it
 * (for `schedule.remove`, the removed schedule as it was), `details` its handler, enabled and
 * trigger. `write` is checked by `assertWriter` before (its `note` here).
 *
 * @throws InvalidOptionError (`note`).
 */
export function scheduleAuditRecord(
  action: 'schedule.create' | ScheduleReplaceAction | 'schedule.remove',
  schedule: StoredSchedule,
  write: { by: string; note?: string | null },
): AuditRecord {
  return {
    ...{
      action,
      job: scheduleJobName(schedule.id),
      by: write.by,
      note: checkAuditNote(write.note),
    },
    ...{ requestId: null, schedule: schedule.id, version: schedule.version },
    details: { handler: schedule.handler, enabled: schedule.enabled, trigger: schedule.trigger },
  };
}

/**
 * The action a `replaceSchedule` records: `write.action` when given (`schedule.enable`,
 * `schedule.disable`), else `schedule.update`. @throws InvalidOptionError (`action`).
 */
export function replaceAuditAction(write: {
  action?: ScheduleReplaceAction | null;
}): ScheduleReplaceAction {
  const action = write.action ?? 'schedule.update';
  if (
    action !== 'schedule.update' &&
    action !== 'schedule.enable' &&
    action !== 'schedule.disable'
  ) {
    throw new InvalidOptionError(
      'action',
      `must be 'schedule.update', 'schedule.enable' or 'schedule.disable', got ${JSON.stringify(action)}.`,
    );
  }
  return action;
}
