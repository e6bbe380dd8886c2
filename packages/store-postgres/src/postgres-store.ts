import type {
  AuditPage,
  AuditQuery,
  AuditStore,
  Execution,
  HistoryPage,
  HistoryQuery,
  InstanceRecord,
  JobState,
  LiveInstance,
  PauseOptions,
  PruneJobOptions,
  RunRequest,
  RunRequestDecision,
  RunRequestInput,
  RunRequestState,
  RunStatus,
  ScheduleChange,
  ScheduleDefinition,
  SchedulePage,
  ScheduleQuery,
  ScheduleStore,
  ScheduleWrite,
  Store,
  StoredSchedule,
  TakenRunRequest,
  TakeRunRequestsOptions,
} from '@fleetcron/core';
import { InvalidOptionError } from '@fleetcron/core';
import {
  assertInstanceRecord,
  assertPositiveInteger,
  auditFilter,
  boundErrorText,
  decodeCursor,
  decodeShard,
  encodeAuditCursor,
  encodeCursor,
  encodeShard,
  pauseAuditRecord,
  resolvePruneJob,
  statusFilter,
} from '@fleetcron/core/backend';
import { assertPool, decodeText, encodeText, StatementSet } from '@fleetcron/postgres-shared';
import type { Pool } from 'pg';
import { fromAuditRow } from './audit-row.js';
import { type AuditRow, auditParameters } from './audit-statements.js';
import { ChannelListener, runRequestChannel, scheduleChannel } from './channel-listener.js';
import type { InstanceRow } from './fleet-statements.js';
import {
  type PostgresStoreOptions,
  type ResolvedStoreOptions,
  resolveStoreOptions,
} from './options.js';
import { PostgresRunRequests } from './postgres-run-requests.js';
import { PostgresSchedules } from './postgres-schedules.js';
import { runRequestStatements } from './run-request-statements.js';
import { scheduleStatements } from './schedule-statements.js';
import { postgresStoreSchema, storeTables } from './schema.js';
import {
  type ExecutionRow,
  type JobRow,
  type StoreStatement,
  storeStatements,
} from './statements.js';

/** Default page size of {@link PostgresStore.history}. */
const DEFAULT_LIMIT = 50;

/**
 * A {@link Store} on PostgreSQL: execution history (newest first, keyset-paginated),
 * fleet-wide job state, fleet control and stored schedules. Every method is one statement in its
 * own implicit transaction; no session state, so transaction-mode poolers work (push, which
 * LISTENs, needs a session: behind such a pooler readers poll).
 *
 * Takes a `pg.Pool` you own (never closes it). Run {@link PostgresStore.migrate} once (or apply
 * {@link postgresStoreSchema} with your migration tool) before use.
 */
export class PostgresStore implements Store, ScheduleStore, AuditStore {
  readonly backend = 'postgres';
  private readonly options: ResolvedStoreOptions;
  private readonly statements: StatementSet<StoreStatement>;
  private readonly channel: string;
  private readonly listener: ChannelListener;
  private readonly runRequests: PostgresRunRequests;
  private readonly schedules: PostgresSchedules;
  private readonly scheduleListener: ChannelListener;

  /** Validates `options` (throws `InvalidOptionError` naming the field); runs no query. */
  constructor(pool: Pool, options: PostgresStoreOptions = {}) {
    assertPool(pool);
    this.options = resolveStoreOptions(options);
    const tables = storeTables(this.options.schema, this.options.table);
    this.statements = new StatementSet(pool, this.backend, this.options, storeStatements(tables));
    this.channel = runRequestChannel(this.options.schema, this.options.table);
    this.listener = new ChannelListener(pool, this.channel, this.options.logger, {
      what: 'run requests',
    });
    this.runRequests = new PostgresRunRequests(
      new StatementSet(pool, this.backend, this.options, runRequestStatements(tables)),
      this.channel,
      this.options.audit,
    );
    const schedules = scheduleChannel(this.options.schema, this.options.table);
    const scheduleListener = new ChannelListener(pool, schedules, this.options.logger, {
      what: 'schedule changes',
      onListen: () => this.schedules.resyncWatchers(),
    });
    this.schedules = new PostgresSchedules(
      new StatementSet(pool, this.backend, this.options, scheduleStatements(tables)),
      schedules,
      scheduleListener,
      this.options.audit,
    );
    this.scheduleListener = scheduleListener;
  }

  /**
   * Creates the schema, tables and indexes when missing (idempotent; safe to run from every
   * instance at start-up). Throws `BackendUnavailableError` when the database cannot be reached.
   */
  async migrate(): Promise<void> {
    await this.statements.migrate(postgresStoreSchema(this.options));
  }

  async record(execution: Execution): Promise<void> {
    // An upsert by id: safe to repeat when the connection broke under the first attempt.
    await this.statements.run('record', 'record', this.parameters(execution), { retry: true });
  }

  /**
   * `record` of each, in order, in one statement (see `recordManySql`): the writes of one id are
   * merged first as the store would apply them one by one (a terminal write ends the row). An
   * upsert: safe to repeat whole.
   */
  async recordMany(executions: readonly Execution[]): Promise<void> {
    if (executions.length === 0) return;
    const merged = new Map<string, Execution>();
    for (const execution of executions) {
      const before = merged.get(execution.id);
      if (before && before.status !== 'running') continue; // the first outcome wins
      merged.delete(execution.id); // re-inserted: the batch order is the order of last writes
      merged.set(execution.id, execution);
    }
    const columns: unknown[][] = Array.from({ length: 13 }, () => []);
    for (const execution of merged.values()) {
      for (const [i, value] of this.parameters(execution).entries()) columns[i]?.push(value);
    }
    await this.statements.run('recordMany', 'recordMany', columns, { retry: true });
  }

  /** The parameters of the record statement for `execution`, in its column order. */
  private parameters(execution: Execution): unknown[] {
    const error = boundErrorText(execution.error, this.options.maxErrorLength);
    const reason = execution.reason ?? null;
    return [
      encodeText(execution.id),
      encodeText(execution.job),
      execution.fireAt,
      execution.status,
      execution.attempt,
      encodeText(execution.instanceId),
      execution.token,
      execution.startedAt,
      execution.finishedAt,
      error === null ? null : encodeText(error),
      reason === null ? null : encodeText(reason),
      execution.requestedBy == null ? null : encodeText(execution.requestedBy),
      encodeShard(execution.shard),
    ];
  }

  async history(job: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    const limit = query.limit ?? DEFAULT_LIMIT;
    assertPositiveInteger('limit', limit);
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    const statuses = statusFilter(query);
    const rows = await this.statements.run<ExecutionRow>(
      'history',
      'history',
      [
        encodeText(job),
        after?.startedAt ?? null,
        after ? encodeText(after.id) : null,
        limit + 1,
        statuses,
      ],
      { retry: true },
    );
    const executions = rows.slice(0, limit).map(toExecution);
    const last = executions.at(-1);
    return {
      executions,
      nextCursor: rows.length > limit && last ? encodeCursor(last.startedAt, last.id) : null,
    };
  }

  async prune(before: number): Promise<number> {
    const [row] = await this.statements.run<{ n: string }>('prune', 'prune', [before]);
    return Number(row?.n ?? 0);
  }

  /**
   * At most `limit` of `job`'s executions beyond its newest `keepLast` or started before
   * `before`, oldest first, never a running one, in one statement (see `pruneJobSql`). Not
   * retried: a second try after a lost answer could delete another `limit`.
   */
  async pruneJob(job: string, options: PruneJobOptions): Promise<number> {
    const { keepLast, before, limit } = resolvePruneJob(job, options);
    const [row] = await this.statements.run<{ n: string }>('pruneJob', 'pruneJob', [
      encodeText(job),
      keepLast,
      before === null ? null : Math.ceil(before),
      limit,
    ]);
    return Number(row?.n ?? 0);
  }

  async getJobState(job: string): Promise<JobState> {
    const [row] = await this.statements.run<JobRow>('getJobState', 'jobState', [encodeText(job)], {
      retry: true,
    });
    return toJobState(job, row);
  }

  /** {@link getJobState} of each of `jobs`, in one statement (`unnest` of the names). */
  async getJobStates(jobs: readonly string[]): Promise<JobState[]> {
    if (!Array.isArray(jobs)) {
      throw new InvalidOptionError('jobs', 'must be an array of job names');
    }
    if (jobs.length === 0) return [];
    const names = jobs.map((job) => encodeText(job));
    const rows = await this.statements.run<JobRow>('getJobStates', 'jobStates', [names], {
      retry: true,
    });
    return jobs.map((job, i) => toJobState(job, rows[i]));
  }

  /**
   * Sets the paused flag and appends its `pause` / `resume` audit entry in one statement. Not
   * retried when the connection breaks under it (a retry could record the entry twice): the
   * caller gets `BackendUnavailableError` and may call again.
   */
  async setPaused(job: string, paused: boolean, options: PauseOptions = {}): Promise<void> {
    const record = pauseAuditRecord(job, paused, options);
    await this.statements.run('setPaused', 'setPaused', [
      ...[encodeText(job), paused, record.by === null ? null : encodeText(record.by)],
      ...auditParameters(record, this.options.audit),
    ]);
  }

  /** The audit log, newest first (`seq DESC`), one indexed range per page. */
  async listAudit(query?: AuditQuery): Promise<AuditPage> {
    const { limit, job, actions, before, after } = auditFilter(query);
    if (after !== null && !/^[1-9][0-9]{0,18}$/.test(after)) {
      throw new InvalidOptionError(
        'cursor',
        'is not a cursor of this store; pass nextCursor unchanged.',
      );
    }
    const rows = await this.statements.run<AuditRow>(
      'listAudit',
      'listAudit',
      [after, job === null ? null : encodeText(job), actions, before, limit + 1],
      { retry: true },
    );
    const entries = rows.slice(0, limit).map(fromAuditRow);
    const last = entries.at(-1);
    return { entries, nextCursor: rows.length > limit && last ? encodeAuditCursor(last.id) : null };
  }

  async listJobs(): Promise<JobState[]> {
    const rows = await this.statements.run<JobRow & { job: string }>('listJobs', 'listJobs', [], {
      retry: true,
    });
    return rows.map((row) => toJobState(decodeText(row.job), row));
  }

  /** Upserts the record; `lastSeenAt` is the database clock. An upsert: safe to repeat. */
  async heartbeat(instance: InstanceRecord): Promise<void> {
    assertInstanceRecord(instance);
    await this.statements.run(
      'heartbeat',
      'heartbeat',
      [encodeText(instance.instanceId), JSON.stringify(instance), instance.heartbeatMs],
      { retry: true },
    );
  }

  async instances(): Promise<LiveInstance[]> {
    const rows = await this.statements.run<InstanceRow>('instances', 'instances', [], {
      retry: true,
    });
    return rows.map((row) => ({
      ...(JSON.parse(row.record) as InstanceRecord),
      lastSeenAt: Number(row.last_seen_at),
    }));
  }

  async leave(instanceId: string): Promise<void> {
    await this.statements.run('leave', 'leave', [encodeText(instanceId)], { retry: true });
  }

  /** Inserts the request (with its `data` as JSON text) and NOTIFYs listeners in one statement. */
  requestRun(input: RunRequestInput): Promise<RunRequest> {
    return this.runRequests.requestRun(input);
  }

  /**
   * Holds the free requests of `jobs` for `options.leaseMs` (default 30 s, by the database clock)
   * in one statement (`FOR UPDATE SKIP LOCKED`), and collects requests decided over an hour ago.
   */
  takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    return this.runRequests.takeRunRequests(jobs, instanceId, options);
  }

  /** Decides a held request: a compare-and-set on its current take (moves it to the decisions). */
  decideRunRequest(id: string, takeId: string, decision: RunRequestDecision): Promise<boolean> {
    return this.runRequests.decideRunRequest(id, takeId, decision);
  }

  /** Gives a held request back (takeable at once) and NOTIFYs its job, in one statement. */
  releaseRunRequest(id: string, takeId: string): Promise<void> {
    return this.runRequests.releaseRunRequest(id, takeId);
  }

  /** Where a request is (its phase by the database clock), or `null`. */
  getRunRequest(id: string): Promise<RunRequestState | null> {
    return this.runRequests.getRunRequest(id);
  }

  /**
   * Push capability via LISTEN/NOTIFY: holds ONE pool connection while anyone listens (not
   * through transaction-mode poolers: there, notifications never arrive and instances poll).
   */
  watchRunRequests(listener: (job: string) => void): () => void {
    return this.listener.subscribe(listener);
  }

  /** Stores a new schedule (one statement that also notifies watchers). */
  createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    return this.schedules.createSchedule(id, definition, write);
  }

  /** Replaces a schedule at the expected version: one `UPDATE … WHERE version = $n`. */
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
   * Push via LISTEN/NOTIFY on a second channel (one more pool connection while anyone watches);
   * `resync` each time LISTEN takes effect, so a change sent while the connection was down is
   * read by the watcher's resync.
   */
  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return this.schedules.watchSchedules(listener);
  }

  /** Stops listening for run requests and schedule changes (returns the connections). */
  async close(): Promise<void> {
    this.listener.stop();
    this.scheduleListener.stop();
  }
}

function toJobState(job: string, row: JobRow | undefined): JobState {
  return {
    job,
    paused: row?.paused ?? false,
    pausedBy: row?.paused_by == null ? null : decodeText(row.paused_by),
    pausedAt: toNumber(row?.paused_at),
    lastStatus: (row?.last_status ?? null) as RunStatus | null,
    lastFireAt: toNumber(row?.last_fire_at),
    lastFinishedAt: toNumber(row?.last_finished_at),
  };
}

function toNumber(value: string | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function toExecution(row: ExecutionRow): Execution {
  return {
    id: decodeText(row.id),
    job: decodeText(row.job),
    fireAt: Number(row.fire_at),
    status: row.status as RunStatus,
    attempt: row.attempt,
    instanceId: decodeText(row.instance_id),
    token: toNumber(row.token),
    startedAt: Number(row.started_at),
    finishedAt: toNumber(row.finished_at),
    error: row.error === null ? null : decodeText(row.error),
    reason: row.reason === null ? null : decodeText(row.reason),
    requestedBy: row.requested_by === null ? null : decodeText(row.requested_by),
    ...shardOf(row.shard),
  };
}

/** `{ shard }` for a part of a sharded fire, `{}` for a plain fire (the field stays absent). */
function shardOf(stored: string | null): Pick<Execution, 'shard'> {
  const shard = decodeShard(stored);
  return shard ? { shard } : {};
}
