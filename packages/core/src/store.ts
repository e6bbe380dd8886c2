import type { AuditStore } from './audit/audit-log.js';
import { InvalidOptionError } from './errors.js';
import type { PruneJobOptions } from './prune-job.js';
import type { FleetStore, PauseOptions } from './registry.js';
import type { ScheduleStore } from './schedules/schedule-store.js';
import type { ShardInfo } from './shards/shard-info.js';

/** The Store contract: execution history and fleet-wide job state. */

/** Status of one execution. */
export type RunStatus =
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'timed_out'
  | 'skipped'
  | 'lease_lost'
  /** Still running at `stop()`'s drain deadline: its signal was aborted by the scheduler. */
  | 'aborted';

/** Statuses that end an execution. */
export const TERMINAL_STATUSES: readonly RunStatus[] = [
  'succeeded',
  'failed',
  'timed_out',
  'skipped',
  'lease_lost',
  'aborted',
];

/** Default bound on stored error text, in characters. */
export const DEFAULT_MAX_ERROR_LENGTH = 8192;

/** One execution (one claimed fire on one instance) as the store keeps it. */
export interface Execution {
  /** Unique id (a UUID chosen by the scheduler). Recording the same id again updates it. */
  id: string;
  /** Job name. */
  job: string;
  /** Scheduled fire time, epoch ms. */
  fireAt: number;
  status: RunStatus;
  /** Attempt number of the last attempt (1-based; retries increase it). */
  attempt: number;
  /** Instance that recorded the execution. */
  instanceId: string;
  /** Fencing token of the lease, `null` for skipped executions without one. */
  token: number | null;
  /** When the execution started on the instance's clock (for `skipped`: when it was skipped). */
  startedAt: number;
  /** When it finished, `null` while running. */
  finishedAt: number | null;
  /** Error text (message and stack), bounded to the store's `maxErrorLength`; `null` if none. */
  error: string | null;
  /** Why the execution was skipped (`overlap`, `paused`, `backend_unavailable`, ...). */
  reason?: string | null;
  /**
   * Who asked for a manual fire (`scheduler.trigger()` or a fleet run request); `null` or absent
   * for scheduled fires. A non-null value marks the execution as manual.
   */
  requestedBy?: string | null;
  /**
   * The part of a sharded fire this execution ran (`shards: n`: part `index` of `count`;
   * `shards: 'each'`: `each: true`); `null` or absent for a plain fire. Every built-in store keeps
   * it and returns it (stores check it with `normalizeShard`). A sharded fire is the executions
   * with the same `job` and `fireAt` (see `groupFires`).
   */
  shard?: ShardInfo | null;
}

/** Fleet-wide state of one job, seen by every instance. */
export interface JobState {
  job: string;
  /** Paused jobs are claimed but not run: the winner records a `skipped` execution. */
  paused: boolean;
  /** Who paused the job (`setPaused`'s `by`), `null` when not paused or unknown. */
  pausedBy?: string | null;
  /** When the job was paused, epoch ms (store clock where it has one), `null` when not paused. */
  pausedAt?: number | null;
  /** Status of the newest finished execution, or `null`. */
  lastStatus: RunStatus | null;
  /** Fire time of the newest finished execution, or `null`. */
  lastFireAt: number | null;
  /** When the newest finished execution finished, or `null`. */
  lastFinishedAt: number | null;
}

/** Options of {@link Store.history}. */
export interface HistoryQuery {
  /** Page size, 1 to 1000. Default 50. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
  /** Only executions with this status (or one of these). Default: every status. */
  status?: RunStatus | readonly RunStatus[] | null;
}

/** One page of history, newest first. */
export interface HistoryPage {
  executions: Execution[];
  /** Pass as `cursor` for the next page; `null` on the last page. */
  nextCursor: string | null;
}

/**
 * Execution history and job state. History is ordered newest first by `(startedAt, id)`.
 * Implementations bound error text to `maxErrorLength` characters (see `boundErrorText`).
 *
 * The fleet-control methods (registry, run requests, `listJobs`, see `FleetStore` in
 * registry.ts) are optional so stores written before them keep working: a scheduler simply
 * does not heartbeat into such a store, and `FleetClient` refuses it with a typed error. The
 * stored-schedule methods (`ScheduleStore`, see schedules/schedule-store.ts) are optional too.
 */
/** Most executions the scheduler sends in one {@link Store.recordMany} call. */
export const RECORD_BATCH_SIZE = 256;
/** Most jobs the scheduler asks about in one {@link Store.getJobStates} call. */
export const JOB_STATE_BATCH_SIZE = 500;

export interface Store extends Partial<FleetStore>, Partial<ScheduleStore>, Partial<AuditStore> {
  /** Backend name, e.g. `memory`, `postgres`. */
  readonly backend: string;
  /**
   * Inserts or updates (by `id`) an execution. When `status` is terminal it also updates the
   * job's `lastStatus`, `lastFireAt` and `lastFinishedAt`, in the same round trip where the
   * backend allows it. Once a row is terminal ({@link TERMINAL_STATUSES}) no later write changes
   * it: the first terminal status wins, atomically (a late write of the start, or a second
   * outcome such as the holder-lost sweep's `lease_lost` racing the run's own `succeeded`, is
   * dropped in the same round trip, and the job's last outcome is left as it was).
   */
  record(execution: Execution): Promise<void>;
  /**
   * Optional: records `executions` as {@link record} would, one after the other in array order
   * (the same id may appear more than once: a start, then its outcome), in as few round trips as
   * the backend allows. The scheduler sends the history rows written in the same macrotask (all
   * the fires of one timer wake) through it, in batches of at most {@link RECORD_BATCH_SIZE}.
   * Every write is an upsert by id whose first terminal status wins, so a batch that failed part
   * way can be sent again whole. Throws `BackendUnavailableError` when the backend cannot be
   * reached. Worth it only where a call is a round trip (`MemoryStore` has none, so it leaves
   * this out and every write is a single `record`).
   */
  recordMany?(executions: readonly Execution[]): Promise<void>;
  /** One page of a job's history, newest first. */
  history(job: string, query?: HistoryQuery): Promise<HistoryPage>;
  /** Deletes executions that started before `before` (epoch ms); resolves how many. */
  prune(before: number): Promise<number>;
  /**
   * Optional: bounded pruning of ONE job's history. Deletes at most `options.limit` executions of
   * `job` that are beyond its newest `keepLast` (by `(startedAt, id)`, every status counted) or
   * started before `before`, oldest first, and never one still `running`; resolves how many it
   * deleted (fewer than `limit`: nothing more to delete now). One statement, script or
   * transaction where the backend allows, its work bounded by `keepLast + limit` rows. Other jobs
   * and job state are untouched. Validates with `resolvePruneJob` (`InvalidOptionError` naming
   * the field) before any round trip. The `historyRetention` job calls it; every built-in store
   * has it.
   */
  pruneJob?(job: string, options: PruneJobOptions): Promise<number>;
  /** The job's state; a job never seen reads as not paused with no last outcome. */
  getJobState(job: string): Promise<JobState>;
  /**
   * Optional: `states[i]` is what {@link getJobState}`(jobs[i])` would answer, in as few round
   * trips as the backend allows (the same job may appear more than once). The scheduler reads
   * the paused flag of every fire it won in the same macrotask (all the fires of one timer wake)
   * through it, in batches of at most {@link JOB_STATE_BATCH_SIZE}: 10,000 jobs due together
   * would otherwise send 10,000 reads beside their claims and history writes. Throws
   * `BackendUnavailableError` when the backend cannot be reached. `MemoryStore` leaves it out
   * (no round trips to save).
   */
  getJobStates?(jobs: readonly string[]): Promise<JobState[]>;
  /**
   * Sets whether the job is paused, fleet-wide, from any process (the job need not be defined
   * there). Pausing records `pausedBy` (`options.by`) and `pausedAt`; resuming clears both. A
   * store that keeps an audit log (`listAudit`) records a `pause` / `resume` entry with
   * `options.by` and `options.note` in the same atomic step (`pauseAuditRecord` checks them
   * first: `InvalidOptionError` naming `by` or `note`, nothing stored).
   */
  setPaused(job: string, paused: boolean, options?: PauseOptions): Promise<void>;
  /** Frees resources the adapter created itself; never closes the user's client. Optional. */
  close?(): Promise<void>;
}

/**
 * Bounds error text to `max` characters without splitting a surrogate pair, appending a marker
 * that says how much was cut. Shared by every store so all backends bound text the same way.
 */
export function boundErrorText(text: string | null, max = DEFAULT_MAX_ERROR_LENGTH): string | null {
  if (text === null || text.length <= max) return text;
  const marker = `… [truncated ${text.length - max} chars]`;
  let end = Math.max(0, max - marker.length);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end) + marker;
}

/** Encodes a history cursor `(startedAt, id)` as an opaque string. */
export function encodeCursor(startedAt: number, id: string): string {
  return Buffer.from(JSON.stringify([startedAt, id]), 'utf8').toString('base64url');
}

/** Decodes a cursor made by {@link encodeCursor}; throws `InvalidOptionError` on garbage. */
export function decodeCursor(cursor: string): { startedAt: number; id: string } {
  try {
    const [startedAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [
      unknown,
      unknown,
    ];
    if (typeof startedAt === 'number' && typeof id === 'string') return { startedAt, id };
  } catch {
    // fall through to the typed error below
  }
  throw new InvalidOptionError(
    'cursor',
    'is not a cursor returned by history(); pass nextCursor unchanged.',
  );
}

/** The statuses a {@link HistoryQuery} asks for, or `null` for all; validates them. */
export function statusFilter(query: HistoryQuery | undefined): RunStatus[] | null {
  const status = query?.status;
  if (status === undefined || status === null) return null;
  const list = typeof status === 'string' ? [status] : [...status];
  const known: readonly RunStatus[] = ['running', ...TERMINAL_STATUSES];
  for (const s of list) {
    if (!known.includes(s)) {
      throw new InvalidOptionError(
        'status',
        `must be one of ${known.join(', ')} (or an array of them), got ${String(s)}.`,
      );
    }
  }
  if (list.length === 0) {
    throw new InvalidOptionError('status', 'must name at least one status; omit it for all.');
  }
  return list;
}
