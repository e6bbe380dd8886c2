/** A job mutation of the API. */
export type JobAction = 'pause' | 'resume' | 'run';

/** A stored-schedule mutation of the API. */
export type ScheduleAction =
  | 'schedule.create'
  | 'schedule.update'
  | 'schedule.enable'
  | 'schedule.disable'
  | 'schedule.remove';

/**
 * One mutation done through the API, as `onAction` receives it. The store's audit log
 * (`GET api/audit`, `FleetClient.audit()`) holds the same who, what and note, written with the
 * mutation itself; `onAction` is a notification beside it (a log line by default).
 */
export interface AdminActionRecord {
  action: JobAction | ScheduleAction;
  /** The job, for a stored schedule its Scheduler job `schedule:<id>`. */
  job: string;
  /** Who asked: `admin:<principal name>`, as stored with the pause, run request or schedule. */
  by: string;
  /** When it was done, epoch ms (server clock). */
  at: number;
  /** The run request's id, for `run`. */
  requestId?: string;
  /** The stored schedule's id, for the `schedule.*` actions. */
  schedule?: string;
  /** The schedule's version after the change (for `schedule.remove`: the version removed). */
  version?: number;
  /** Why, as the caller wrote it in the body's `note` (at most 1 000 characters). */
  note?: string;
}
