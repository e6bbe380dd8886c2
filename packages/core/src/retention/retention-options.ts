import { InvalidOptionError } from '../errors.js';
import { MAX_PRUNE_JOB_LIMIT } from '../prune-job.js';
import type { Store } from '../store.js';
import type { Trigger } from '../trigger.js';
import { every } from '../triggers/every.js';
import { assertNonEmptyString, assertPositiveInteger, assertPositiveMs } from '../validate.js';

/** Default {@link HistoryRetentionOptions.keepLast}: the newest 1,000 executions of each job. */
export const DEFAULT_RETENTION_KEEP_LAST = 1000;
/** Default {@link HistoryRetentionOptions.maxAgeMs}: 30 days. */
export const DEFAULT_RETENTION_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** Default {@link HistoryRetentionOptions.rowsPerRun}: at most 10,000 executions deleted per run. */
export const DEFAULT_RETENTION_ROWS_PER_RUN = 10_000;
/** Default {@link HistoryRetentionOptions.rowsPerCall}: at most 1,000 per `pruneJob` call. */
export const DEFAULT_RETENTION_ROWS_PER_CALL = 1000;
/** Default {@link HistoryRetentionOptions.every}: every 5 minutes (on the epoch grid). */
export const DEFAULT_RETENTION_EVERY_MS = 5 * 60 * 1000;
/** Default {@link HistoryRetentionOptions.name}. */
export const DEFAULT_RETENTION_JOB_NAME = 'fleetcron.history-retention';

/** What one run of the retention job did (its `onReport` argument and `history.pruned` event). */
export interface RetentionReport {
  /** Executions deleted by this run, all jobs together (at most `rowsPerRun`). */
  deleted: number;
  /** Jobs this run called `pruneJob` for. */
  jobsVisited: number;
  /** Jobs the store listed. */
  jobsListed: number;
  /** Per job deleted from, executions deleted (jobs with none are left out). */
  deletedByJob: Record<string, number>;
  /**
   * `done`: every listed job was visited and none has more to delete now. `budget`: `rowsPerRun`
   * was used up; the next run on this instance resumes at `resumeAt`. `signal`: `ctx.signal`
   * was aborted (lease lost, timeout, stop); the next run resumes at `resumeAt`.
   */
  stoppedBy: 'done' | 'budget' | 'signal';
  /** The job the next run starts with (`null` after `done`: it starts with the first job). */
  resumeAt: string | null;
  /** The age bound used: executions that started before this epoch ms were prunable (or `null`). */
  before: number | null;
  /** The count bound used (or `null`). */
  keepLast: number | null;
}

/** Options of {@link historyRetention}. */
export interface HistoryRetentionOptions {
  /** The fleet's store: needs `pruneJob` and `listJobs` (every built-in store has both). */
  store: Store;
  /** Executions kept per job, newest first; `null`: no count bound. Default 1000. */
  keepLast?: number | null;
  /** Executions older than this (by `startedAt`) are deleted; `null`: no age bound. Default 30 days. */
  maxAgeMs?: number | null;
  /** Most executions deleted by one run, all jobs together. Default 10,000. */
  rowsPerRun?: number;
  /** Most executions deleted by one `pruneJob` call (one statement). Default 1000, at most 10,000. */
  rowsPerCall?: number;
  /** Run interval in ms (an `every()` trigger); ignored when `trigger` is given. Default 5 minutes. */
  every?: number;
  /** When to run instead of `every`, e.g. `cron('0 * * * *')`. */
  trigger?: Trigger;
  /** The job's name (its lock key and history). Default `fleetcron.history-retention`. */
  name?: string;
  /** Called with each run's report, on the instance that ran it. A throw fails the run. */
  onReport?: (report: RetentionReport) => void;
}

/** {@link HistoryRetentionOptions} checked, with defaults applied. */
export interface ResolvedRetention {
  store: Store & Required<Pick<Store, 'pruneJob' | 'listJobs'>>;
  keepLast: number | null;
  maxAgeMs: number | null;
  rowsPerRun: number;
  rowsPerCall: number;
  trigger: Trigger;
  name: string;
  onReport: ((report: RetentionReport) => void) | null;
}

/** Applies defaults; throws `InvalidOptionError` naming the first bad option. */
export function resolveRetention(options: HistoryRetentionOptions): ResolvedRetention {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('options', 'must be an object with at least { store }.');
  }
  const { store } = options;
  if (typeof store?.pruneJob !== 'function' || typeof store.listJobs !== 'function') {
    throw new InvalidOptionError(
      'store',
      'must have pruneJob() and listJobs() (every built-in store has both; a custom store must implement them).',
    );
  }
  const keepLast = options.keepLast === undefined ? DEFAULT_RETENTION_KEEP_LAST : options.keepLast;
  if (keepLast !== null) assertPositiveInteger('keepLast', keepLast);
  const maxAgeMs = options.maxAgeMs === undefined ? DEFAULT_RETENTION_MAX_AGE_MS : options.maxAgeMs;
  if (maxAgeMs !== null) assertPositiveMs('maxAgeMs', maxAgeMs);
  if (keepLast === null && maxAgeMs === null) {
    throw new InvalidOptionError(
      'keepLast',
      'and maxAgeMs are both null: give at least one bound, or do not add the retention job.',
    );
  }
  const rowsPerRun = options.rowsPerRun ?? DEFAULT_RETENTION_ROWS_PER_RUN;
  assertPositiveInteger('rowsPerRun', rowsPerRun);
  const rowsPerCall = options.rowsPerCall ?? DEFAULT_RETENTION_ROWS_PER_CALL;
  assertPositiveInteger('rowsPerCall', rowsPerCall);
  if (rowsPerCall > MAX_PRUNE_JOB_LIMIT) {
    throw new InvalidOptionError(
      'rowsPerCall',
      `must be at most ${MAX_PRUNE_JOB_LIMIT} (one bounded statement), got ${rowsPerCall}.`,
    );
  }
  const name = options.name ?? DEFAULT_RETENTION_JOB_NAME;
  assertNonEmptyString('name', name);
  if (options.onReport !== undefined && typeof options.onReport !== 'function') {
    throw new InvalidOptionError('onReport', 'must be a function (report) => void.');
  }
  return {
    store: store as ResolvedRetention['store'],
    keepLast,
    maxAgeMs,
    rowsPerRun,
    rowsPerCall,
    trigger: options.trigger ?? every(options.every ?? DEFAULT_RETENTION_EVERY_MS),
    name,
    onReport: options.onReport ?? null,
  };
}
