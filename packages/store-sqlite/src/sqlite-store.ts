import {
  type AuditPage,
  type AuditQuery,
  type AuditRetention,
  type AuditStore,
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
  type RunRequestDecision,
  type RunRequestInput,
  type RunRequestState,
  type ScheduleChange,
  type ScheduleDefinition,
  type SchedulePage,
  type ScheduleQuery,
  type ScheduleStore,
  type ScheduleWrite,
  type Store,
  type StoredSchedule,
  silentLogger,
  type TakenRunRequest,
  type TakeRunRequestsOptions,
} from '@fleetcron/core';
import {
  assertInstanceRecord,
  assertPositiveInteger,
  auditFilter,
  boundErrorText,
  DECIDED_RUN_REQUEST_KEEP_MS,
  DEFAULT_MAX_ERROR_LENGTH,
  decodeCursor,
  decodeShard,
  encodeAuditCursor,
  encodeCursor,
  encodeShard,
  newRunRequest,
  pauseAuditRecord,
  resolveAuditRetention,
  resolvePruneJob,
  runRequestAuditRecord,
  runRequestPhase,
  statusFilter,
  takeLeaseMs,
} from '@fleetcron/core/backend';
import {
  resolveSource,
  type SqliteExecutor,
  type SqliteSource,
  type SqliteSourceOptions,
} from '@fleetcron/sqlite-shared';
import { type AuditBounds, auditArgs, fromAuditRow } from './audit-args.js';
import type { AuditListArgs, AuditRow } from './audit-operations.js';
import {
  type ExecutionRecord,
  type HistoryArgs,
  type PauseArgs,
  type PruneJobArgs,
  storeOperations,
} from './operations.js';
import type {
  DecideArgs,
  RunRequestRecord,
  RunRequestStateRecord,
  TakeArgs,
  TakenRunRequestRecord,
} from './run-request-operations.js';
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
  /**
   * How much audit log to keep: the newest `maxEntries` (default 100,000) of at most `maxAgeMs`
   * (default 90 days); each append deletes at most 20 entries beyond the bounds.
   */
  audit?: AuditRetention;
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
export class SqliteStore implements Store, ScheduleStore, AuditStore {
  readonly backend = BACKEND;
  private readonly executor: SqliteExecutor;
  private readonly maxErrorLength: number;
  private readonly schedules: SqliteSchedules;
  private readonly audit: AuditBounds;

  constructor(database: SqliteSource, options: SqliteStoreOptions = {}) {
    this.maxErrorLength = options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH;
    assertPositiveInteger('maxErrorLength', this.maxErrorLength);
    this.audit = resolveAuditRetention(options.audit);
    this.executor = resolveSource(
      database,
      options,
      { module: { url: operationsUrl(), exportName: 'storeOperations' }, set: storeOperations },
      BACKEND,
    ).executor;
    const pollMs = options.schedulePollMs ?? SQLITE_SCHEDULE_POLL_MS;
    assertPositiveInteger('schedulePollMs', pollMs);
    this.schedules = new SqliteSchedules(
      ...[this.executor, pollMs, options.logger ?? silentLogger],
      this.audit,
    );
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
    const rows = (await this.executor.run<ExecutionRecord[]>('history', args)).map(
      fromExecutionRecord,
    );
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

  /**
   * Pauses with who and when (host clock); resuming clears both. One `BEGIN IMMEDIATE`
   * transaction with the `pause` / `resume` audit entry (`by`, `note`).
   */
  async setPaused(job: string, paused: boolean, options: PauseOptions = {}): Promise<void> {
    const record = pauseAuditRecord(job, paused, options);
    const args: PauseArgs = { job, paused, by: record.by, audit: auditArgs(record, this.audit) };
    await this.executor.run('setPaused', args);
  }

  /** The audit log, newest first (`seq DESC`): one indexed range per page. */
  async listAudit(query?: AuditQuery): Promise<AuditPage> {
    const { limit, job, actions, before, after } = auditFilter(query);
    const seq = after === null ? null : Number(after);
    if (seq !== null && !Number.isSafeInteger(seq)) {
      throw new InvalidOptionError(
        'cursor',
        'is not a cursor of this store; pass nextCursor unchanged.',
      );
    }
    const args: AuditListArgs = {
      ...{ limit: limit + 1, job, before, after: seq },
      actions: actions === null ? null : JSON.stringify(actions),
    };
    const rows = await this.executor.run<AuditRow[]>('listAudit', args);
    const entries = rows.slice(0, limit).map(fromAuditRow);
    const last = entries.at(-1);
    return { entries, nextCursor: rows.length > limit && last ? encodeAuditCursor(last.id) : null };
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

  /**
   * Stores the request (`data` as JSON text), `requestedAt` on the host clock, and its `run`
   * audit entry, in one `BEGIN IMMEDIATE` transaction. No push
   * capability: instances poll `takeRunRequests`.
   */
  async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = newRunRequest(input, 0);
    const audit = auditArgs(runRequestAuditRecord(request, input.note), this.audit);
    const record: RunRequestRecord = { ...request, data: encodeData(request.data) };
    return fromRunRequestRecord(
      await this.executor.run<RunRequestRecord>('requestRun', { ...record, audit }),
    );
  }

  /**
   * One `BEGIN IMMEDIATE` transaction: collects up to 100 requests decided more than
   * `DECIDED_RUN_REQUEST_KEEP_MS` ago, then holds every takeable request of `jobs` (not decided,
   * no lease running on the host clock) for this take, oldest first, each with a fresh `takeId`.
   *
   * @throws InvalidOptionError (`leaseMs`) unless a positive integer of milliseconds.
   */
  async takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    const leaseMs = takeLeaseMs(options);
    if (jobs.length === 0) return [];
    const args: TakeArgs = {
      jobs: [...jobs],
      instanceId,
      leaseMs,
      keepMs: DECIDED_RUN_REQUEST_KEEP_MS,
    };
    const taken = await this.executor.run<TakenRunRequestRecord[]>('takeRunRequests', args);
    return taken.map(({ takeId, takenUntil, takes, ...record }) => ({
      ...fromRunRequestRecord(record),
      ...{ takeId, takenUntil, takes },
    }));
  }

  /**
   * One `BEGIN IMMEDIATE` transaction: decides the request (`decidedAt` on the host clock) when
   * `takeId` is its current take and it is not decided; `true` also when this take decided it
   * already (a retry), `false` otherwise.
   */
  decideRunRequest(id: string, takeId: string, decision: RunRequestDecision): Promise<boolean> {
    const args: DecideArgs = {
      id,
      takeId,
      fireAt: decision.fireAt,
      decidedBy: decision.instanceId,
    };
    return this.executor.run<boolean>('decideRunRequest', args);
  }

  /** One `UPDATE` guarded by the take and the decision: takeable at once, or a no-op. */
  releaseRunRequest(id: string, takeId: string): Promise<void> {
    return this.executor.run('releaseRunRequest', { id, takeId });
  }

  /** The request with its take and decision; `state` on the host clock. */
  async getRunRequest(id: string): Promise<RunRequestState | null> {
    const record = await this.executor.run<RunRequestStateRecord | null>('getRunRequest', id);
    if (!record) return null;
    const { takes, takenBy, takenUntil, decidedAt, fireAt, decidedBy, ...request } = record;
    return {
      ...fromRunRequestRecord(request),
      ...{ state: runRequestPhase(record, Date.now()), takes, takenBy, takenUntil },
      ...{ decidedAt, fireAt, decidedBy },
    };
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

/** A request's `data` as stored: JSON text, SQL `NULL` for `null` (as rows made before `data`). */
function encodeData(data: RunRequest['data']): string | null {
  return data === null ? null : JSON.stringify(data);
}

/** A request as read back: its `data` decoded (`NULL`: `null`). */
function fromRunRequestRecord(record: RunRequestRecord): RunRequest {
  const { id, job, requestedBy, requestedAt, data } = record;
  return {
    ...{ id, job, requestedBy, requestedAt },
    data: data === null ? null : (JSON.parse(data) as RunRequest['data']),
  };
}

/** An execution as read back: the `shard` JSON decoded, absent for a plain fire. */
function fromExecutionRecord({ shard: stored, ...row }: ExecutionRecord): Execution {
  const shard = decodeShard(stored);
  return shard ? { ...row, shard } : row;
}
