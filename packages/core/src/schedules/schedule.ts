import type { CatchUpSpec, TriggerSpec } from '../registry.js';
import type { OverlapPolicy } from '../scheduler/job/index.js';

/**
 * Schedules as data: the stored shape. A stored schedule names a handler that code registers
 * (see `ScheduleServer`) and carries its trigger spec, a JSON payload and the job options, with a
 * version for optimistic concurrency and who/when of its last change.
 */

/** A JSON value: what `data` may hold (checked by `JSON.stringify` round trip and size). */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** Most bytes of a schedule's `data`, as UTF-8 JSON: 64 KiB. */
export const MAX_SCHEDULE_DATA_BYTES = 64 * 1024;
/** Longest schedule id, in characters. */
export const MAX_SCHEDULE_ID_LENGTH = 200;
/** Longest handler name, in characters. */
export const MAX_HANDLER_NAME_LENGTH = 128;
/** Longest `options.note`, in characters. */
export const MAX_SCHEDULE_NOTE_LENGTH = 1_000;
/** Prefix of the Scheduler job name of a stored schedule: `schedule:<id>`. */
export const SCHEDULE_JOB_PREFIX = 'schedule:';

/** Retry of a stored schedule's runs (the `retry()` middleware's JSON subset). */
export interface ScheduleRetry {
  /** Total number of runs, the first included. A positive integer. */
  attempts: number;
  /** Exponential backoff between attempts (see `retry()`). */
  backoff?: { initialMs?: number; maxMs?: number; factor?: number };
  /** `'full'` (default) or `'none'`. */
  jitter?: 'full' | 'none';
}

/** The job options a stored schedule may carry; each absent one takes the handler's default. */
export interface ScheduleOptions {
  /** Lease length, ms (the lock's minimum applies when the job is added). */
  leaseMs?: number;
  /** `'skip'` (default) or `'allow'`. */
  overlap?: OverlapPolicy;
  /** Fires missed while the whole fleet was down (see the Scheduler's `catchUp`). */
  catchUp?: CatchUpSpec;
  /** Retry of a failed run. */
  retry?: ScheduleRetry;
  /** Time limit of one attempt, ms (the `timeout()` middleware inside `retry`). */
  timeoutMs?: number;
  /** No fire before this time, epoch ms. */
  startAt?: number;
  /** No fire after this time, epoch ms. Not before `startAt`. */
  endAt?: number;
  /** Free text for people (what the schedule is for), at most 1,000 characters. */
  note?: string;
  /**
   * The schedule's dead-man's switch, ms: `fleetWatchdog()` raises `job_overdue` for it when no
   * run succeeded by its expected fire plus this grace (as its `overdue` option does per job),
   * and resolves it at the next success. The run itself ignores it.
   */
  overdueAfterMs?: number;
  /** Each fire claimed and run a fixed offset of up to this many ms after its time (the job's `jitterMs`). */
  jitterMs?: number;
}

/** What a schedule is, without identity or audit: what `create` takes and `update` replaces. */
export interface ScheduleDefinition {
  /** Name of the handler that runs it (registered in code, e.g. `reports.daily`). */
  handler: string;
  /** When it fires: the same JSON specs the fleet registry publishes (cron with zone, every, at). */
  trigger: TriggerSpec;
  /** JSON payload handed to the run as `ctx.schedule.data`; at most 64 KiB. Default `null`. */
  data: JsonValue;
  /** A disabled schedule is kept but not served. Default `true`. */
  enabled: boolean;
  /** Job options (default `{}`). */
  options: ScheduleOptions;
}

/** A schedule as the store keeps it. */
export interface StoredSchedule extends ScheduleDefinition {
  /** Unique id (the Scheduler job is named `schedule:<id>`). */
  id: string;
  /** 1 when created, +1 on every change (enable, disable and edits alike). */
  version: number;
  /** When it was created, epoch ms (the store's clock where it has one). */
  createdAt: number;
  /** Who created it. */
  createdBy: string;
  /** When it last changed, epoch ms (the store's clock where it has one). */
  updatedAt: number;
  /** Who changed it last. */
  updatedBy: string;
}

/** What a run of a stored schedule sees as `ctx.schedule`. */
export interface ScheduleRef {
  readonly id: string;
  readonly data: JsonValue;
  readonly version: number;
}

/** The Scheduler job name of schedule `id`. */
export function scheduleJobName(id: string): string {
  return `${SCHEDULE_JOB_PREFIX}${id}`;
}
