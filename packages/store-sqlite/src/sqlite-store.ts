import {
  type Execution,
  type HistoryPage,
  type HistoryQuery,
  type InstanceRecord,
  InvalidOptionError,
  type JobState,
  type LiveInstance,
  type Logger,
  type PauseOptions,
  type PruneJobOptions,
  type RunRequest,
  type RunRequestInput,
  type ScheduleChange,
  type ScheduleDefinition,
  type SchedulePage,
  type ScheduleQuery,
  type ScheduleStore,
  type ScheduleWrite,
  type Store,
  type StoredSchedule,
  silentLogger,
} from '@fleetcron/core';
import {
  assertInstanceRecord,
  assertPositiveInteger,
  boundErrorText,
  DEFAULT_MAX_ERROR_LENGTH,
  decodeCursor,
  decodeShard,
  encodeCursor,
  encodeShard,
  newRunRequest,
  resolvePruneJob,
  statusFilter,
} from '@fleetcron/core/backend';
import {
  resolveSource,
  type SqliteExecutor,
  type SqliteSource,
  type SqliteSourceOptions,
} from '@fleetcron/sqlite-shared';
import {
  type ExecutionRecord,
  type HistoryArgs,
  type PruneJobArgs,
  storeOperations,
} from './operations.js';
import { SqliteSchedules } from './sqlite-schedules.js';

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions extends SqliteSourceOptions {
  /** Longest stored error text, in characters. Default 8192. */
  maxErrorLength?: number;
  /**
   * How often `watchSchedules` polls the file's schedule change counter while anyone watches,
   * ms. Default 250 (a change reaches every process within about 0.3 s).
   */
  schedulePollMs?: number;
  /** Where a failing schedule-change poll is logged (warn) and its recovery (info). Default: silent. */
  logger?: Logger;
}

/** Default {@link SqliteStoreOptions.schedulePollMs}. */
export const SQLITE_SCHEDULE_POLL_MS = 250;

const BACKEND = 'sqlite';
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

/**
 * A {@link Store} on a SQLite file shared by the processes of one host: run history and job state
 * (paused, last outcome) every process sees. Pass a file path (own connection in a worker thread,
 * closed on `close()`) or your libsql `Database` (used on your thread, never closed).
 * The lock and the store may share one file: their tables do not overlap. Stored schedules
 * (`ScheduleStore`) live in the same file; other processes hear their changes by polling.
 */
export class SqliteStore implements Store, ScheduleStore {
  readonly backend = BACKEND;
  private readonly executor: SqliteExecutor;
  private readonly maxErrorLength: number;
  private readonly schedules: SqliteSchedules;

  constructor(database: SqliteSource, options: SqliteStoreOptions = {}) {
    this.maxErrorLength = options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH;
    assertPositiveInteger('maxErrorLength', this.maxErrorLength);
    this.executor = resolveSource(
      database,
      options,
      { module: { url: operationsUrl(), exportName: 'storeOperations' }, set: storeOperations },
      BACKEND,
    ).executor;
    const pollMs = options.schedulePollMs ?? SQLITE_SCHEDULE_POLL_MS;
    assertPositiveInteger('schedulePollMs', pollMs);
    this.schedules = new SqliteSchedules(this.executor, pollMs, options.logger ?? silentLogger);
  }

  /** Opens the connection and creates the tables if missing (optional: the first call does it). */
  open(): Promise<void> {
    return this.executor.open();
  }

  async record(execution: Execution): Promise<void> {
    return this.executor.run('record', this.recordOf(execution));
  }

  /**
   * `record` of each execution, in order, in one `BEGIN IMMEDIATE` transaction running the same
   * two statements (one request to the connection). Every execution is encoded (shard checked)
   * before anything is sent; a row SQLite refuses rolls the whole batch back.
   */
  async recordMany(executions: readonly Execution[]): Promise<void> {
    if (executions.length === 0) return;
    const rows = executions.map((execution) => this.recordOf(execution));
    return this.executor.run('recordMany', rows);
  }

  /** The row `record` writes for `execution`: error bounded, shard as JSON (checked). */
  private recordOf(execution: Execution): ExecutionRecord {
    return {
      id: execution.id,
      job: execution.job,
      fireAt: execution.fireAt,
      status: execution.status,
      attempt: execution.attempt,
      instanceId: execution.instanceId,
      token: execution.token,
      startedAt: execution.startedAt,
      finishedAt: execution.finishedAt,
      error: boundErrorText(execution.error, this.maxErrorLength),
      reason: execution.reason ?? null,
      requestedBy: execution.requestedBy ?? null,
      shard: encodeShard(execution.shard),
    };
  }

  async history(job: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    const limit = query.limit ?? DEFAULT_LIMIT;
    assertPositiveInteger('limit', limit);
    if (limit > MAX_LIMIT) throw new InvalidOptionError('limit', `must be at most ${MAX_LIMIT}.`);
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    const statuses = statusFilter(query);
    const args: HistoryArgs = {
      job,
      limit: limit + 1,
      after,
      statuses: statuses ? JSON.stringify(statuses) : null,
    };
    const rows = (await this.executor.run<ExecutionRecord[]>('history', args)).map(fromRecord);
    const executions = rows.slice(0, limit);
    const last = executions.at(-1);
    return {
      executions,
      nextCursor: rows.length > limit && last ? encodeCursor(last.startedAt, last.id) : null,
    };
  }

  prune(before: number): Promise<number> {
    return this.executor.run<number>('prune', before);
  }

  /**
   * At most `limit` of `job`'s executions beyond its newest `keepLast` or started before
   * `before`, oldest first, never a running one: one `DELETE` (see `PRUNE_JOB_SQL`).
   */
  async pruneJob(job: string, options: PruneJobOptions): Promise<number> {
    const { keepLast, before, limit } = resolvePruneJob(job, options);
    const args: PruneJobArgs = { job, keepLast, before, limit };
    return this.executor.run<number>('pruneJob', args);
  }

  getJobState(job: string): Promise<JobState> {
    return this.executor.run<JobState>('getJobState', job);
  }

  /** Pauses with who and when (host clock); resuming clears both. */
  setPaused(job: string, paused: boolean, options: PauseOptions = {}): Promise<void> {
    return this.executor.run('setPaused', { job, paused, by: options.by ?? null });
  }

  listJobs(): Promise<JobState[]> {
    return this.executor.run<JobState[]>('listJobs', undefined);
  }

  /** Upserts the record; `lastSeenAt` is the host clock (one host, one clock). */
  heartbeat(instance: InstanceRecord): Promise<void> {
    assertInstanceRecord(instance);
    return this.executor.run('heartbeat', instance);
  }

  instances(): Promise<LiveInstance[]> {
    return this.executor.run<LiveInstance[]>('instances', undefined);
  }

  leave(instanceId: string): Promise<void> {
    return this.executor.run('leave', instanceId);
  }

  /** Stores the request. No push capability: instances poll `takeRunRequests`. */
  requestRun(input: RunRequestInput): Promise<RunRequest> {
    return this.executor.run<RunRequest>('requestRun', newRunRequest(input, 0));
  }

  /** One `BEGIN IMMEDIATE` `DELETE … RETURNING`: each request goes to exactly one taker. */
  async takeRunRequests(jobs: readonly string[], _instanceId: string): Promise<RunRequest[]> {
    if (jobs.length === 0) return [];
    return this.executor.run<RunRequest[]>('takeRunRequests', [...jobs]);
  }

  /**
   * Stores a new schedule at version 1 (a removed id: one past its tombstone), one
   * `INSERT … ON CONFLICT DO UPDATE … WHERE removed` in a `BEGIN IMMEDIATE` transaction.
   */
  createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    return this.schedules.createSchedule(id, definition, write);
  }

  /** Replaces a schedule at the expected version: one `UPDATE … WHERE version = @expected`. */
  replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    return this.schedules.replaceSchedule(id, definition, write);
  }

  /** Removes a schedule (its tombstone keeps the version). */
  removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    return this.schedules.removeSchedule(id, write);
  }

  getSchedule(id: string): Promise<StoredSchedule | null> {
    return this.schedules.getSchedule(id);
  }

  listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    return this.schedules.listSchedules(query);
  }

  /**
   * No push in SQLite: polls the file's schedule change counter every `schedulePollMs` while
   * anyone watches; `resync` at the first read and after a failed poll recovers.
   */
  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return this.schedules.watchSchedules(listener);
  }

  /** Stops polling schedule changes and closes the connection the store opened (never your `Database`). */
  close(): Promise<void> {
    this.schedules.close();
    return this.executor.close();
  }
}

/** URL of `operations.ts` (sources) or `operations.js` (build), for the worker thread. */
function operationsUrl(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./operations.${ext}`, import.meta.url).href;
}

/** An execution as read back: the `shard` JSON decoded, absent for a plain fire. */
function fromRecord({ shard: stored, ...row }: ExecutionRecord): Execution {
  const shard = decodeShard(stored);
  return shard ? { ...row, shard } : row;
}
