import {
  type AuditPage,
  type AuditQuery,
  type AuditStore,
  BackendUnavailableError,
  type Execution,
  type HistoryPage,
  type HistoryQuery,
  type InstanceRecord,
  InvalidOptionError,
  type JobState,
  type LiveInstance,
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
  type TakenRunRequest,
  type TakeRunRequestsOptions,
} from '@fleetcron/core';
import {
  assertPositiveInteger,
  boundErrorText,
  decodeCursor,
  decodeShard,
  encodeCursor,
  newJobState,
  normalizeShard,
  pauseAuditRecord,
  resolvePruneJob,
  statusFilter,
  TERMINAL_STATUSES,
} from '@fleetcron/core/backend';
import { BACKEND, callEtcd, singleAttemptClientOf } from '@fleetcron/etcd-shared';
import { type Etcd3, Range } from 'etcd3';
import { EtcdAudit } from './etcd-audit.js';
import { EtcdFleet } from './etcd-fleet.js';
import { EtcdRunRequests } from './etcd-run-requests.js';
import { EtcdSchedules } from './etcd-schedules.js';
import { StoreKeys } from './keys.js';
import {
  type EtcdStoreOptions,
  type ResolvedStoreOptions,
  resolveStoreOptions,
} from './options.js';
import { pruneJobOnEtcd } from './prune-job.js';
import { RecordBatch } from './record-batch.js';
import { ScheduleWatch } from './schedule-watch.js';

/** Executions read per round trip when history filters by status. */
const FILTER_BATCH = 200;

/** Transactions `record()` tries when the execution changes between its read and its write. */
const RECORD_ATTEMPTS = 5;

/**
 * A {@link Store} on etcd v3: execution history (one key per execution, ordered by
 * `(startedAt, id)`, at most `maxHistory` per job), job state, the instance registry (records on
 * etcd leases of 3 heartbeats) and run requests (held by a take, decided once, by
 * compare-and-put transactions; announced through an etcd watch), so an etcd-only fleet gets the
 * same fleet control as PostgreSQL and Redis users; and stored schedules (one key each,
 * versioned writes as one transaction comparing the key, pushed through an etcd watch with a
 * `resync` on every (re)connect). Every pause, resume, run request and schedule write puts its
 * audit entry (`listAudit`) in its own transaction.
 */
export class EtcdStore implements Store, ScheduleStore, AuditStore {
  readonly backend = BACKEND;
  private readonly options: ResolvedStoreOptions;
  private readonly client: Etcd3;
  private readonly keys: StoreKeys;
  private readonly fleet: EtcdFleet;
  private readonly runRequests: EtcdRunRequests;
  private readonly batch: RecordBatch;
  private readonly schedules: EtcdSchedules;
  private readonly scheduleWatch: ScheduleWatch;
  private readonly audit: EtcdAudit;

  /**
   * @param client The root `Etcd3` client (not a namespace). Never closed by the store: its
   *   calls go through a second client built from its options (see the README).
   * @throws InvalidOptionError naming the first bad option.
   */
  constructor(client: Etcd3, options: EtcdStoreOptions = {}) {
    this.options = resolveStoreOptions(options);
    this.client = singleAttemptClientOf(client);
    this.keys = new StoreKeys(this.options.prefix);
    this.audit = new EtcdAudit(
      this.client,
      this.keys,
      this.options.audit,
      this.options.maxTxnOps,
      (operation, fn) => this.call(operation, fn),
    );
    this.fleet = new EtcdFleet(this.client, this.keys, this.options);
    this.runRequests = new EtcdRunRequests(this.client, this.keys, this.options, this.audit);
    this.batch = new RecordBatch({
      client: this.client,
      keys: this.keys,
      maxHistory: this.options.maxHistory,
      maxTxnOps: this.options.maxTxnOps,
      call: (operation, fn) => this.call(operation, fn),
    });
    this.schedules = new EtcdSchedules({
      client: this.client,
      keys: this.keys,
      now: () => this.options.clock.now(),
      audit: this.audit,
      call: (operation, fn) => this.call(operation, fn),
    });
    this.scheduleWatch = new ScheduleWatch(this.client, this.keys.allSchedules());
  }

  async record(execution: Execution): Promise<void> {
    const stored = this.storedOf(execution);
    const { id, job } = stored;
    const indexKey = this.keys.index(job, id);
    for (let attempt = 1; ; attempt++) {
      const previous = await this.call('record', (o) =>
        this.client.get(indexKey).options(o).string(),
      );
      const written = await this.write(stored, previous);
      if (written === 'refused') return;
      if (written === 'written') {
        if (previous === null) await this.trim(job);
        return;
      }
      // 'changed': the row moved between the read and the transaction (another write of the
      // same execution); read again. Only the scheduler writes an execution, twice at most.
      if (attempt >= RECORD_ATTEMPTS) {
        throw BackendUnavailableError.because(
          BACKEND,
          'record',
          `execution ${id} changed under each of ${RECORD_ATTEMPTS} transactions`,
        );
      }
    }
  }

  /**
   * `record` of each execution, in order, in a few round trips: one read of the rows, write
   * transactions of at most `maxTxnOps` compares and operations each (sent together), then the
   * trims (see `RecordBatch`). Every execution is checked before anything is written.
   */
  async recordMany(executions: readonly Execution[]): Promise<void> {
    if (executions.length === 0) return;
    const stored = executions.map((execution) => this.storedOf(execution));
    await this.batch.write(stored);
  }

  async history(job: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    const limit = query.limit ?? 50;
    assertPositiveInteger('limit', limit);
    const statuses = statusFilter(query);
    const prefix = this.keys.executions(job);
    let end = prefixEndString(prefix);
    if (query.cursor) {
      const after = decodeCursor(query.cursor);
      if (!Number.isSafeInteger(after.startedAt) || after.startedAt < 0) {
        throw new InvalidOptionError(
          'cursor',
          'is not a cursor returned by history(); pass nextCursor unchanged.',
        );
      }
      end = prefix + this.keys.member(after.startedAt, after.id);
    }
    const rows: Execution[] = [];
    for (;;) {
      const batch = statuses ? Math.max(limit + 1, FILTER_BATCH) : limit + 1;
      const values = await this.call('history', (o) =>
        this.client
          .getAll()
          .inRange(new Range(prefix, end))
          .sort('Key', 'Descend')
          .limit(batch)
          .options(o)
          .exec(),
      );
      for (const kv of values.kvs) {
        const { shard: kept, ...row } = JSON.parse(kv.value.toString()) as Execution;
        const shard = decodeShard(kept);
        const execution: Execution = { ...row, ...(shard ? { shard } : {}) };
        if (!statuses || statuses.includes(execution.status)) rows.push(execution);
        end = kv.key.toString();
      }
      if (!statuses || values.kvs.length < batch || rows.length > limit) break;
    }
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      executions: page,
      nextCursor: rows.length > limit && last ? encodeCursor(last.startedAt, last.id) : null,
    };
  }

  async prune(before: number): Promise<number> {
    if (typeof before !== 'number' || Number.isNaN(before)) {
      throw new InvalidOptionError('before', `must be an epoch ms number, got ${String(before)}.`);
    }
    const all = this.keys.allExecutions();
    const keys = await this.call('prune', (o) =>
      this.client.getAll().prefix(all).options(o).keys(),
    );
    let removed = 0;
    for (const key of keys) {
      const rest = key.slice(all.length);
      const slash = rest.indexOf('/');
      const startedAt = Number(rest.slice(slash + 1, slash + 17));
      if (!(startedAt < before)) continue;
      const id = rest.slice(slash + 18);
      const indexKey = `${this.options.prefix}x/${rest.slice(0, slash)}/${id}`;
      await this.call('prune', (o) =>
        this.client
          .if(key, 'Version', '>', -1)
          .then(this.client.delete().key(key), this.client.delete().key(indexKey))
          .options(o)
          .commit(),
      );
      removed++;
    }
    return removed;
  }

  /**
   * At most `limit` of `job`'s executions beyond its newest `keepLast` or started before
   * `before`, oldest first, never a running one (see `pruneJobOnEtcd`: a count, paged reads,
   * then delete transactions of `maxTxnOps` operations).
   */
  async pruneJob(job: string, options: PruneJobOptions): Promise<number> {
    const bounds = resolvePruneJob(job, options);
    return pruneJobOnEtcd(
      {
        client: this.client,
        keys: this.keys,
        maxTxnOps: this.options.maxTxnOps,
        call: (operation, fn) => this.call(operation, fn),
      },
      job,
      bounds,
    );
  }

  /** Reads the pause state and last outcome in one transaction. */
  async getJobState(job: string): Promise<JobState> {
    const response = await this.call('getJobState', (o) =>
      this.client.kv.txn(
        {
          compare: [],
          success: [
            { request_range: { key: Buffer.from(this.keys.pause(job)) } },
            { request_range: { key: Buffer.from(this.keys.outcome(job)) } },
          ],
          failure: [],
        },
        o,
      ),
    );
    const [pause, outcome] = response.responses.map((r) => r.response_range?.kvs[0]?.value);
    return {
      ...newJobState(job),
      ...(pause ? (JSON.parse(pause.toString()) as Pause) : {}),
      ...(outcome ? (JSON.parse(outcome.toString()) as Outcome) : {}),
    };
  }

  /**
   * Pauses with who and when (`clock`); resuming clears both. One transaction puts the state and
   * the `pause` / `resume` audit entry (with `options.note`); then a bounded audit prune.
   */
  async setPaused(job: string, paused: boolean, options: PauseOptions = {}): Promise<void> {
    const record = pauseAuditRecord(job, paused, options);
    const now = this.options.clock.now();
    const pause: Pause = {
      paused,
      pausedBy: paused ? record.by : null,
      pausedAt: paused ? now : null,
    };
    const state = {
      request_put: {
        key: Buffer.from(this.keys.pause(job)),
        value: Buffer.from(JSON.stringify(pause)),
      },
    };
    await this.call('setPaused', (o) =>
      this.client.kv.txn(
        { compare: [], success: [state, ...this.audit.puts(record, now)], failure: [] },
        o,
      ),
    );
    await this.audit.prune(now);
  }

  /**
   * One page of the audit log, newest first: one descending key range (the job's own index when
   * the query names a job). Order between processes is that of their clocks.
   */
  listAudit(query?: AuditQuery): Promise<AuditPage> {
    return this.audit.listAudit(query);
  }

  /** Jobs with a pause state or an outcome, by name (one transaction reads both prefixes). */
  listJobs(): Promise<JobState[]> {
    return this.fleet.listJobs();
  }

  /** Puts the record on a fresh etcd lease of 3 heartbeats (see the README, "Liveness"). */
  heartbeat(instance: InstanceRecord): Promise<void> {
    return this.fleet.heartbeat(instance);
  }

  instances(): Promise<LiveInstance[]> {
    return this.fleet.instances();
  }

  leave(instanceId: string): Promise<void> {
    return this.fleet.leave(instanceId);
  }

  requestRun(input: RunRequestInput): Promise<RunRequest> {
    return this.runRequests.requestRun(input);
  }

  takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    return this.runRequests.takeRunRequests(jobs, instanceId, options);
  }

  decideRunRequest(id: string, takeId: string, decision: RunRequestDecision): Promise<boolean> {
    return this.runRequests.decideRunRequest(id, takeId, decision);
  }

  releaseRunRequest(id: string, takeId: string): Promise<void> {
    return this.runRequests.releaseRunRequest(id, takeId);
  }

  getRunRequest(id: string): Promise<RunRequestState | null> {
    return this.runRequests.getRunRequest(id);
  }

  /** Push capability through an etcd watch on the run-request prefix. */
  watchRunRequests(listener: (job: string) => void): () => void {
    return this.runRequests.watchRunRequests(listener);
  }

  /**
   * Stores a new schedule at version 1, or one version past its tombstone: one transaction
   * that requires the key absent (or as read). @throws DuplicateScheduleError.
   */
  createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    return this.schedules.createSchedule(id, definition, write);
  }

  /**
   * Replaces a schedule at the expected version: one transaction comparing the key's
   * `mod_revision` to the one read. @throws ScheduleConflictError, UnknownScheduleError.
   */
  replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    return this.schedules.replaceSchedule(id, definition, write);
  }

  /** Removes a schedule (its tombstone keeps the version), as {@link replaceSchedule}. */
  removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    return this.schedules.removeSchedule(id, write);
  }

  /** The schedule, or `null` (never created, or removed). One read. */
  getSchedule(id: string): Promise<StoredSchedule | null> {
    return this.schedules.getSchedule(id);
  }

  /** A page of live schedules by id, optionally of one handler (filtered as read). */
  listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    return this.schedules.listSchedules(query);
  }

  /**
   * Push capability: one etcd watch on the schedules' prefix while anyone listens; `changed`
   * per write, `resync` each time the watch (re)connects (see `ScheduleWatch`).
   */
  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return this.scheduleWatch.subscribe(listener);
  }

  /** Cancels the watches and closes the store's own client (never yours). */
  async close(): Promise<void> {
    this.runRequests.close();
    this.scheduleWatch.close();
    this.client.close();
  }

  /**
   * `execution` as the store keeps it (error bounded, shard checked, absent fields `null`).
   * Throws `InvalidOptionError` for a bad `startedAt` or `shard`.
   */
  private storedOf(execution: Execution): Execution {
    const { startedAt } = execution;
    if (!Number.isSafeInteger(startedAt) || startedAt < 0) {
      throw new InvalidOptionError(
        'startedAt',
        `must be an integer epoch ms >= 0, got ${String(startedAt)}.`,
      );
    }
    const shard = normalizeShard(execution.shard);
    const { shard: _given, ...rest } = execution;
    return {
      ...rest,
      ...(shard ? { shard } : {}), // a part of a sharded fire; absent for a plain fire
      reason: execution.reason ?? null,
      requestedBy: execution.requestedBy ?? null,
      error: boundErrorText(execution.error, this.options.maxErrorLength),
    };
  }

  /**
   * Writes an execution whose index entry read `previous`, in one transaction. A terminal row is
   * never changed again (the first outcome wins): every write compares the stored row (and the
   * index) to what it read, so a write landing in between makes it `changed`, and a terminal row
   * makes it `refused`.
   */
  private async write(
    stored: Execution,
    previous: string | null,
  ): Promise<'written' | 'refused' | 'changed'> {
    const { job, id } = stored;
    const member = this.keys.member(stored.startedAt, id);
    const indexKey = this.keys.index(job, id);
    const previousKey = previous === null ? null : this.keys.executions(job) + previous;
    const ops = [
      this.client.put(this.keys.executions(job) + member).value(JSON.stringify(stored)),
      this.client.put(indexKey).value(member),
    ];
    if (previousKey !== null && previous !== member) {
      ops.push(this.client.delete().key(previousKey) as never);
    }
    if (TERMINAL_STATUSES.includes(stored.status)) {
      const outcome: Outcome = {
        lastStatus: stored.status,
        lastFireAt: stored.fireAt,
        lastFinishedAt: stored.finishedAt,
      };
      ops.push(this.client.put(this.keys.outcome(job)).value(JSON.stringify(outcome)));
    }
    let txn = this.client.if(indexKey, 'Version', '==', 0);
    if (previous !== null && previousKey !== null) {
      const row = await this.call('record', (o) =>
        this.client.get(previousKey).options(o).string(),
      );
      if (row !== null && (JSON.parse(row) as Execution).status !== 'running') return 'refused';
      txn = this.client
        .if(indexKey, 'Value', '==', previous)
        .and(previousKey, row === null ? 'Version' : 'Value', '==', row ?? 0);
    }
    const result = await this.call('record', (o) =>
      txn
        .then(...ops)
        .options(o)
        .commit(),
    );
    return result.succeeded ? 'written' : 'changed';
  }

  /** Drops the oldest executions of `job` beyond `maxHistory`. */
  private async trim(job: string): Promise<void> {
    const prefix = this.keys.executions(job);
    const count = await this.call('record', (o) =>
      this.client.getAll().prefix(prefix).options(o).count(),
    );
    const excess = count - this.options.maxHistory;
    if (excess <= 0) return;
    const keys = await this.call('record', (o) =>
      this.client.getAll().prefix(prefix).sort('Key', 'Ascend').limit(excess).options(o).keys(),
    );
    for (const key of keys) {
      const id = key.slice(prefix.length + 17);
      await this.call('record', (o) =>
        this.client
          .if(key, 'Version', '>', -1)
          .then(this.client.delete().key(key), this.client.delete().key(this.keys.index(job, id)))
          .options(o)
          .commit(),
      );
    }
  }

  private call<T>(operation: string, fn: (o: { deadline: Date }) => Promise<T>): Promise<T> {
    return callEtcd(operation, this.options.requestTimeoutMs, fn);
  }
}

/** What `p/<job>` holds. */
type Pause = Pick<JobState, 'paused' | 'pausedBy' | 'pausedAt'>;
/** What `o/<job>` holds. */
type Outcome = Pick<JobState, 'lastStatus' | 'lastFireAt' | 'lastFinishedAt'>;

/** The first key after every key starting with `prefix` (prefix is ASCII here). */
function prefixEndString(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
