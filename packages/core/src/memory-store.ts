import { randomUUID } from 'node:crypto';
import type { AuditPage, AuditQuery, AuditRetention, AuditStore } from './audit/audit-log.js';
import { pauseAuditRecord, runRequestAuditRecord } from './audit/audit-records.js';
import { MemoryAudit } from './audit/memory-audit.js';
import { type Clock, realClock } from './clock.js';
import { type PruneJobOptions, resolvePruneJob } from './prune-job.js';
import {
  assertInstanceRecord,
  DECIDED_RUN_REQUEST_KEEP_MS,
  type InstanceRecord,
  instanceExpired,
  type LiveInstance,
  newRunRequest,
  type PauseOptions,
  type RunRequest,
  type RunRequestDecision,
  type RunRequestInput,
  type RunRequestState,
  runRequestPhase,
  type TakenRunRequest,
  type TakeRunRequestsOptions,
  takeLeaseMs,
} from './registry.js';
import { MemorySchedules } from './schedules/memory-schedules.js';
import type { ScheduleDefinition, StoredSchedule } from './schedules/schedule.js';
import type {
  ScheduleChange,
  SchedulePage,
  ScheduleQuery,
  ScheduleStore,
  ScheduleWrite,
} from './schedules/schedule-store.js';
import { normalizeShard } from './shards/shard-info.js';
import {
  boundErrorText,
  DEFAULT_MAX_ERROR_LENGTH,
  decodeCursor,
  type Execution,
  encodeCursor,
  type HistoryPage,
  type HistoryQuery,
  type JobState,
  type Store,
  statusFilter,
  TERMINAL_STATUSES,
} from './store.js';
import { assertPositiveInteger } from './validate.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Longest stored error text, in characters. Default 8192. */
  maxErrorLength?: number;
  /** Clock of `lastSeenAt`, `pausedAt`, `requestedAt` and audit entries. Default: the real clock. */
  clock?: Clock;
  /** How much audit log to keep. Default: the newest 100,000 entries of at most 90 days. */
  audit?: AuditRetention;
}

/** Orders executions newest first by `(startedAt, id)`. */
export function compareNewestFirst(a: Execution, b: Execution): number {
  if (a.startedAt !== b.startedAt) return b.startedAt - a.startedAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The state of a job the store has never seen: not paused, no outcome. */
export function newJobState(job: string): JobState {
  return {
    job,
    paused: false,
    pausedBy: null,
    pausedAt: null,
    lastStatus: null,
    lastFireAt: null,
    lastFinishedAt: null,
  };
}

/**
 * The reference {@link Store}, in process memory: history and job state, fleet control,
 * stored schedules (with push: `watchSchedules`) and the audit log (each entry appended in the
 * same synchronous step as its mutation) for tests, demos and single-process use.
 * Nothing survives the process.
 */
export class MemoryStore implements Store, ScheduleStore, AuditStore {
  readonly backend = 'memory';
  private readonly maxErrorLength: number;
  private readonly executions = new Map<string, Execution>();
  /**
   * Ids of each job's executions (history reads one job's rows, not every row of every job). An
   * id whose row is gone from `executions` is dropped when read.
   */
  private readonly idsByJob = new Map<string, Set<string>>();
  private readonly states = new Map<string, JobState>();
  private readonly live = new Map<string, LiveInstance>();
  /** Run requests in the order they were made (decided ones kept for a while, see `collect`). */
  private readonly requests: StoredRunRequest[] = [];
  private readonly watchers = new Set<(job: string) => void>();
  private readonly clock: Clock;
  private readonly schedules: MemorySchedules;
  private readonly audit: MemoryAudit;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.audit = new MemoryAudit(this.clock, options.audit);
    this.schedules = new MemorySchedules(this.clock, this.audit);
    this.maxErrorLength = options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH;
    assertPositiveInteger('maxErrorLength', this.maxErrorLength);
  }

  async record(execution: Execution): Promise<void> {
    const current = this.executions.get(execution.id);
    if (current && current.status !== 'running') return; // a finished row keeps its outcome
    const shard = normalizeShard(execution.shard);
    const { shard: _given, ...rest } = execution;
    const stored: Execution = {
      ...rest,
      error: boundErrorText(execution.error, this.maxErrorLength),
      ...(shard ? { shard } : {}),
    };
    this.executions.set(execution.id, stored);
    if (current === undefined) {
      let ids = this.idsByJob.get(execution.job);
      if (ids === undefined) {
        ids = new Set();
        this.idsByJob.set(execution.job, ids);
      }
      ids.add(execution.id);
    }
    if (TERMINAL_STATUSES.includes(execution.status)) {
      const state = this.stateOf(execution.job);
      state.lastStatus = execution.status;
      state.lastFireAt = execution.fireAt;
      state.lastFinishedAt = execution.finishedAt;
    }
  }

  async history(job: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    const limit = query.limit ?? 50;
    assertPositiveInteger('limit', limit);
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    const statuses = statusFilter(query);
    const rows = this.rowsOf(job)
      .filter((e) => !statuses || statuses.includes(e.status))
      .sort(compareNewestFirst)
      .filter(
        (e) =>
          !after ||
          e.startedAt < after.startedAt ||
          (e.startedAt === after.startedAt && e.id < after.id),
      );
    const page = rows
      .slice(0, limit)
      .map((e) => ({ ...e, ...(e.shard ? { shard: { ...e.shard } } : {}) }));
    const last = page.at(-1);
    return {
      executions: page,
      nextCursor: rows.length > limit && last ? encodeCursor(last.startedAt, last.id) : null,
    };
  }

  async prune(before: number): Promise<number> {
    let removed = 0;
    for (const [id, execution] of this.executions) {
      if (execution.startedAt < before) {
        this.executions.delete(id);
        this.idsByJob.get(execution.job)?.delete(id);
        removed++;
      }
    }
    return removed;
  }

  /**
   * Deletes at most `limit` of `job`'s executions beyond its newest `keepLast` or started before
   * `before`, oldest first, never a `running` one (see `PruneJobOptions`). The reference
   * selection every store's `pruneJob` must match.
   */
  async pruneJob(job: string, options: PruneJobOptions): Promise<number> {
    const { keepLast, before, limit } = resolvePruneJob(job, options);
    const newestFirst = this.rowsOf(job).sort(compareNewestFirst);
    const prunable = newestFirst.filter(
      (e, rank) =>
        e.status !== 'running' &&
        ((keepLast !== null && rank >= keepLast) || (before !== null && e.startedAt < before)),
    );
    const doomed = prunable.reverse().slice(0, limit);
    const ids = this.idsByJob.get(job);
    for (const e of doomed) {
      this.executions.delete(e.id);
      ids?.delete(e.id);
    }
    return doomed.length;
  }

  /** The stored rows of `job` (the store's own objects: copy before handing out). */
  private rowsOf(job: string): Execution[] {
    const ids = this.idsByJob.get(job);
    const rows: Execution[] = [];
    if (ids === undefined) return rows;
    for (const id of ids) {
      const row = this.executions.get(id);
      if (row === undefined)
        ids.delete(id); // removed by a prune
      else rows.push(row);
    }
    return rows;
  }

  async getJobState(job: string): Promise<JobState> {
    return { ...(this.states.get(job) ?? newJobState(job)) };
  }

  async setPaused(job: string, paused: boolean, options: PauseOptions = {}): Promise<void> {
    const record = pauseAuditRecord(job, paused, options);
    this.audit.append(record);
    const state = this.stateOf(job);
    state.paused = paused;
    state.pausedBy = paused ? (options.by ?? null) : null;
    state.pausedAt = paused ? this.clock.now() : null;
  }

  async listJobs(): Promise<JobState[]> {
    return [...this.states.values()]
      .map((s) => ({ ...s }))
      .sort((a, b) => (a.job < b.job ? -1 : a.job > b.job ? 1 : 0));
  }

  async heartbeat(instance: InstanceRecord): Promise<void> {
    assertInstanceRecord(instance);
    this.collect();
    this.live.set(
      instance.instanceId,
      deepFreeze(structuredClone({ ...instance, lastSeenAt: this.clock.now() })),
    );
  }

  /**
   * The live instances. Each record is the store's own frozen copy, shared by every read (a
   * heartbeat replaces it): reading the registry of a fleet of 10,000 jobs copies nothing.
   */
  async instances(): Promise<LiveInstance[]> {
    this.collect();
    return [...this.live.values()].sort((a, b) =>
      a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0,
    );
  }

  async leave(instanceId: string): Promise<void> {
    this.live.delete(instanceId);
  }

  async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = newRunRequest(input, this.clock.now());
    this.audit.append(runRequestAuditRecord(request, input.note));
    this.requests.push({
      ...{ request, takes: 0, takeId: null, takenBy: null, takenUntil: null },
      ...{ decidedAt: null, fireAt: null, decidedBy: null },
    });
    this.announce(request.job);
    return copyRequest(request);
  }

  async takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    const leaseMs = takeLeaseMs(options);
    const now = this.clock.now();
    this.collectDecided(now);
    const wanted = new Set(jobs);
    const taken: TakenRunRequest[] = [];
    for (const stored of this.requests) {
      if (!wanted.has(stored.request.job) || runRequestPhase(stored, now) !== 'pending') continue;
      stored.takes += 1;
      stored.takeId = randomUUID();
      stored.takenBy = instanceId;
      stored.takenUntil = now + leaseMs;
      taken.push({
        ...copyRequest(stored.request),
        ...{ takeId: stored.takeId, takenUntil: stored.takenUntil, takes: stored.takes },
      });
    }
    return taken;
  }

  async decideRunRequest(
    id: string,
    takeId: string,
    decision: RunRequestDecision,
  ): Promise<boolean> {
    const stored = this.requests.find((r) => r.request.id === id);
    if (!stored || stored.takeId !== takeId) return false;
    if (stored.decidedAt !== null) return true; // this take decided it: a retried call
    stored.decidedAt = this.clock.now();
    stored.fireAt = decision.fireAt;
    stored.decidedBy = decision.instanceId;
    return true;
  }

  async releaseRunRequest(id: string, takeId: string): Promise<void> {
    const stored = this.requests.find((r) => r.request.id === id);
    if (!stored || stored.takeId !== takeId || stored.decidedAt !== null) return;
    stored.takenUntil = null;
    this.announce(stored.request.job);
  }

  async getRunRequest(id: string): Promise<RunRequestState | null> {
    const stored = this.requests.find((r) => r.request.id === id);
    if (!stored) return null;
    const { request, takes, takenBy, takenUntil, decidedAt, fireAt, decidedBy } = stored;
    return {
      ...copyRequest(request),
      ...{ state: runRequestPhase(stored, this.clock.now()), takes, takenBy, takenUntil },
      ...{ decidedAt, fireAt, decidedBy },
    };
  }

  /** Tells the watchers that `job` has a request to take. */
  private announce(job: string): void {
    for (const listener of this.watchers) {
      try {
        listener(job);
      } catch {
        // a listener's failure is its own; the request is stored either way
      }
    }
  }

  /** Drops requests decided more than {@link DECIDED_RUN_REQUEST_KEEP_MS} ago. */
  private collectDecided(now: number): void {
    for (let i = 0; i < this.requests.length; ) {
      const { decidedAt } = this.requests[i]!;
      if (decidedAt !== null && now - decidedAt > DECIDED_RUN_REQUEST_KEEP_MS) {
        this.requests.splice(i, 1);
      } else i++;
    }
  }

  watchRunRequests(listener: (job: string) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    return this.schedules.createSchedule(id, definition, write);
  }

  replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    return this.schedules.replaceSchedule(id, definition, write);
  }

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

  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return this.schedules.watchSchedules(listener);
  }

  /** The audit log, newest first: every pause, resume, run request and schedule write. */
  listAudit(query?: AuditQuery): Promise<AuditPage> {
    return this.audit.listAudit(query);
  }

  /** Drops instances unseen for 3 heartbeats. */
  private collect(): void {
    const now = this.clock.now();
    for (const [id, instance] of this.live)
      if (instanceExpired(instance, now)) this.live.delete(id);
  }

  private stateOf(job: string): JobState {
    let state = this.states.get(job);
    if (!state) {
      state = newJobState(job);
      this.states.set(job, state);
    }
    return state;
  }
}

/** Freezes `value` and every object and array in it; returns it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** A run request as the memory store keeps it: the request and its takes and decision. */
interface StoredRunRequest {
  readonly request: RunRequest;
  takes: number;
  takeId: string | null;
  takenBy: string | null;
  takenUntil: number | null;
  decidedAt: number | null;
  fireAt: number | null;
  decidedBy: string | null;
}

/** A copy of a request whose `data` the caller may change without touching the store's. */
function copyRequest(request: RunRequest): RunRequest {
  return { ...request, data: structuredClone(request.data) };
}
