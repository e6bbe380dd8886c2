import { randomUUID } from 'node:crypto';
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
  type PauseOptions,
  type PruneJobOptions,
  type RunRequest,
  type RunRequestDecision,
  type RunRequestInput,
  type RunRequestState,
  type RunStatus,
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
  assertPositiveMs,
  DEFAULT_MAX_ERROR_LENGTH,
  decodeCursor,
  encodeCursor,
  pauseAuditRecord,
  resolveAuditRetention,
  resolvePruneJob,
  statusFilter,
  TERMINAL_STATUSES,
} from '@fleetcron/core/backend';
import {
  hashSlot,
  type RedisClient,
  RedisCommands,
  RedisScript,
  resolveCommandTimeoutMs,
  resolvePrefix,
} from '@fleetcron/redis-shared';
import { decodeExecutionRow, encodeExecutionRow } from './execution-row.js';
import { SET_PAUSED } from './fleet-scripts.js';
import { JobRegistry } from './job-registry.js';
import {
  type AuditKeys,
  auditKeys,
  type FleetKeys,
  fleetKeys,
  indexMember,
  MAX_STARTED_AT,
  padTime,
  registryKey,
  type StoreKeys,
  scheduleKeys,
  storeKeys,
} from './keys.js';
import { PRUNE_JOB } from './prune-job-script.js';
import { planRecordCalls, type RecordWrite } from './record-calls.js';
import { RedisAudit } from './redis-audit.js';
import { RedisFleet } from './redis-fleet.js';
import { RedisRunRequests } from './redis-run-requests.js';
import { RedisSchedules } from './redis-schedules.js';
import { HISTORY, PRUNE, RECORD, RECORD_MANY } from './scripts.js';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** First part of every key's hash tag; must not contain `{` or `}`. Default `fleetcron`. */
  prefix?: string;
  /** Executions kept per job; recording more drops the oldest. Default 1000. */
  maxHistory?: number;
  /**
   * When set, executions that started more than this many ms ago (by the Redis clock) are
   * dropped whenever the job records, and a job's history expires this long after its last
   * record. Default: unset (only `maxHistory` and `prune()` bound the history).
   */
  maxAgeMs?: number;
  /** Longest stored error text, in characters. Default 8192. */
  maxErrorLength?: number;
  /** Longest wait for one Redis call before it fails with `BackendUnavailableError`. Default 5000. */
  commandTimeoutMs?: number;
  /**
   * How much audit log to keep (`listAudit`): at most `maxEntries` newest entries (default
   * 100,000) of at most `maxAgeMs` (default 90 days, Redis clock). Each mutation's script prunes
   * a bounded batch of older entries as it appends its own.
   */
  audit?: AuditRetention;
}

/** Default of {@link RedisStoreOptions.maxHistory}. */
export const DEFAULT_MAX_HISTORY = 1000;

const recordScript = new RedisScript(RECORD);
const recordManyScript = new RedisScript(RECORD_MANY);
const historyScript = new RedisScript(HISTORY);
const pruneScript = new RedisScript(PRUNE);
const pruneJobScript = new RedisScript(PRUNE_JOB);
const setPausedScript = new RedisScript(SET_PAUSED);
/** Index members read per round trip when history filters by status. */
const FILTER_BATCH = 200;

const isTerminal = (status: RunStatus): boolean => TERMINAL_STATUSES.includes(status);

/**
 * A {@link Store} on Redis (standalone, Sentinel or Cluster, through an ioredis client the user
 * owns). Per job: a sorted-set index ordered exactly by `(startedAt, id)`, a hash of executions
 * and a state hash, under the hash tag `{prefix:job}`. Each `record()` is one script call that
 * also updates the job state and trims the history, so memory stays bounded. Stored schedules
 * live under the hash tag `{prefix}`: each write is one script that checks the version, writes
 * and PUBLISHes the change. Every pause, resume, run request and schedule write appends its
 * audit entry (`listAudit`) inside its own script, under the same hash tag `{prefix}`.
 */
export class RedisStore implements Store, ScheduleStore, AuditStore {
  readonly backend = 'redis';
  private readonly prefix: string;
  private readonly maxHistory: number;
  private readonly maxAgeMs: number | undefined;
  private readonly maxErrorLength: number;
  private readonly commands: RedisCommands;
  /** The job names `prune()` and `listJobs()` walk. */
  private readonly registry: JobRegistry;
  private readonly fleet: RedisFleet;
  private readonly runRequests: RedisRunRequests;
  private readonly schedules: RedisSchedules;
  private readonly audit: RedisAudit;
  private readonly fleetKeys: FleetKeys;
  private readonly auditKeys: AuditKeys;

  /**
   * @param redis An ioredis `Redis` or `Cluster` client. The store never closes it. Attach an
   *   `'error'` listener to it; if it has none, the store attaches a no-op one so a connection
   *   error can never crash the process.
   */
  constructor(
    private readonly redis: RedisClient,
    options: RedisStoreOptions = {},
  ) {
    this.prefix = resolvePrefix(options.prefix);
    this.maxHistory = options.maxHistory ?? DEFAULT_MAX_HISTORY;
    assertPositiveInteger('maxHistory', this.maxHistory);
    if (options.maxAgeMs !== undefined) {
      assertPositiveMs('maxAgeMs', options.maxAgeMs);
      this.maxAgeMs = Math.ceil(options.maxAgeMs);
    }
    this.maxErrorLength = options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH;
    assertPositiveInteger('maxErrorLength', this.maxErrorLength);
    const retention = resolveAuditRetention(options.audit);
    const commandTimeoutMs = resolveCommandTimeoutMs(options.commandTimeoutMs);
    this.commands = new RedisCommands(redis, commandTimeoutMs);
    this.fleetKeys = fleetKeys(this.prefix);
    this.auditKeys = auditKeys(this.prefix);
    this.audit = new RedisAudit(redis, this.commands, this.auditKeys, retention);
    this.fleet = new RedisFleet(redis, this.commands, this.fleetKeys);
    this.runRequests = new RedisRunRequests(redis, this.commands, this.fleetKeys, this.audit);
    this.registry = new JobRegistry(redis, this.commands, registryKey(this.prefix));
    this.schedules = new RedisSchedules(
      redis,
      this.commands,
      scheduleKeys(this.prefix),
      this.audit,
    );
  }

  async record(execution: Execution): Promise<void> {
    const write = this.writeOf(execution);
    await this.commands.call('record', async () => {
      await this.registry.add(execution.job);
      await recordScript.run(this.redis, [...write.keys], [...write.args, ...this.trimArgs]);
    });
  }

  /**
   * `record` of each execution, in order, as one `EVALSHA` of the record script's loop per
   * group of jobs (at most {@link RECORD_CALL_SIZE} executions, never splitting a job; on a
   * Cluster, per hash slot), all written at once: one round trip per node. Every execution is
   * checked before anything is sent. The executions of one job go in one call, so their order
   * holds even when a call has to be re-sent as `EVAL` (`NOSCRIPT`).
   */
  async recordMany(executions: readonly Execution[]): Promise<void> {
    if (executions.length === 0) return;
    const writes = executions.map((execution) => this.writeOf(execution));
    const calls = planRecordCalls(writes, this.slotOf());
    const jobs = [...new Set(executions.map((e) => e.job))];
    await this.commands.call('recordMany', (signal) =>
      Promise.all([
        this.registry.addMany(jobs),
        ...calls.map((call) =>
          recordManyScript.run(this.redis, call.keys, [...this.trimArgs, ...call.args], signal),
        ),
      ]),
    );
  }

  async history(job: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    const limit = query.limit ?? 50;
    assertPositiveInteger('limit', limit);
    let start = '+';
    if (query.cursor) {
      const after = decodeCursor(query.cursor);
      if (!Number.isSafeInteger(after.startedAt) || after.startedAt < 0) {
        throw new InvalidOptionError(
          'cursor',
          'is not a cursor returned by history(); pass nextCursor unchanged.',
        );
      }
      start = `(${indexMember(after.startedAt, after.id)}`;
    }
    const rows = await this.readHistory(job, start, limit + 1, statusFilter(query));
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
    if (before <= 0) return 0;
    const bound = `(${padTime(Math.min(Math.ceil(before), MAX_STARTED_AT + 1))}`;
    let removed = 0;
    for await (const jobs of this.registry.jobs('prune')) {
      for (const job of jobs) {
        const keys = this.keysOf(job);
        const count = await this.commands.call('prune', () =>
          pruneScript.run(this.redis, [keys.index, keys.executions], [bound]),
        );
        removed += Number(count);
      }
    }
    return removed;
  }

  /**
   * At most `limit` of `job`'s executions beyond its newest `keepLast` or started before
   * `before`, oldest first, never a running one: one script on the job's keys (see
   * `PRUNE_JOB`).
   */
  async pruneJob(job: string, options: PruneJobOptions): Promise<number> {
    const { keepLast, before, limit } = resolvePruneJob(job, options);
    const bound =
      before === null ? '' : padTime(Math.min(Math.max(Math.ceil(before), 0), MAX_STARTED_AT + 1));
    const keys = this.keysOf(job);
    const count = await this.commands.call('pruneJob', () =>
      pruneJobScript.run(
        this.redis,
        [keys.index, keys.executions],
        [keepLast === null ? '' : String(keepLast), bound, String(limit)],
      ),
    );
    return Number(count);
  }

  async getJobState(job: string): Promise<JobState> {
    return (await this.readStates([job], 'getJobState'))[0]!.state;
  }

  /**
   * Pauses with who and when (Redis clock); resuming clears both. One script writes the state and
   * appends the `pause` / `resume` audit entry (with `options.note`). Adds the job to the registry.
   */
  async setPaused(job: string, paused: boolean, options: PauseOptions = {}): Promise<void> {
    const record = pauseAuditRecord(job, paused, options);
    const audit = this.audit.tail(record);
    const keys = [this.fleetKeys.paused, this.auditKeys.pauseToken(randomUUID()), ...audit.keys];
    const args = [job, paused ? '1' : '0', record.by ?? '', ...audit.args];
    await this.commands.call('setPaused', async (signal) => {
      await this.registry.add(job);
      await setPausedScript.run(this.redis, keys, args, signal);
    });
  }

  /** One page of the audit log, newest first (in the order the scripts appended the entries). */
  listAudit(query?: AuditQuery): Promise<AuditPage> {
    return this.audit.listAudit(query);
  }

  /** Jobs in the registry whose state hash holds something (paused or an outcome), by name. */
  async listJobs(): Promise<JobState[]> {
    const jobs = new Set<string>();
    for await (const batch of this.registry.jobs('listJobs')) {
      for (const job of batch) jobs.add(job);
    }
    const states = await this.readStates([...jobs].sort(), 'listJobs');
    return states.filter((s) => s.exists).map((s) => s.state);
  }

  /** Upserts the record; `lastSeenAt` is the Redis clock (`TIME`). */
  heartbeat(instance: InstanceRecord): Promise<void> {
    return this.fleet.heartbeat(instance);
  }

  instances(): Promise<LiveInstance[]> {
    return this.fleet.instances();
  }

  leave(instanceId: string): Promise<void> {
    return this.fleet.leave(instanceId);
  }

  /** Stores the request (with its `data`) and PUBLISHes the job name, in one script. */
  requestRun(input: RunRequestInput): Promise<RunRequest> {
    return this.runRequests.requestRun(input);
  }

  /**
   * One script takes every open request of `jobs` whose last take ended (Redis clock): each gets
   * a fresh `takeId` and is held by this take for `leaseMs` (default 30 s). It also collects
   * requests decided more than an hour ago (a bounded number per call).
   */
  takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    return this.runRequests.takeRunRequests(jobs, instanceId, options);
  }

  /** One script: decides the request iff `takeId` is its current take (true again to that take). */
  decideRunRequest(id: string, takeId: string, decision: RunRequestDecision): Promise<boolean> {
    return this.runRequests.decideRunRequest(id, takeId, decision);
  }

  /** Gives a held request back (takeable at once, its job PUBLISHed); a no-op unless the take's. */
  releaseRunRequest(id: string, takeId: string): Promise<void> {
    return this.runRequests.releaseRunRequest(id, takeId);
  }

  /** Where a request is (its `state` judged on the Redis clock), or `null` when unknown. */
  getRunRequest(id: string): Promise<RunRequestState | null> {
    return this.runRequests.getRunRequest(id);
  }

  /** Push capability via pub/sub on a duplicate of your client (made on first use). */
  watchRunRequests(listener: (job: string) => void): () => void {
    return this.runRequests.watchRunRequests(listener);
  }

  /**
   * Stores a new schedule at version 1 (a removed id one past its tombstone): one script that
   * also PUBLISHes the change. @throws DuplicateScheduleError when the id is live.
   */
  createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    return this.schedules.createSchedule(id, definition, write);
  }

  /**
   * Replaces a schedule at the expected version: one script compares the version and writes (or
   * answers the conflict) atomically on the server. @throws ScheduleConflictError,
   * UnknownScheduleError.
   */
  replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    return this.schedules.replaceSchedule(id, definition, write);
  }

  /** Removes a schedule (its tombstone keeps the version); resolves it as it was. */
  removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    return this.schedules.removeSchedule(id, write);
  }

  /** The live schedule `id`, or `null`: one `HGET`. */
  getSchedule(id: string): Promise<StoredSchedule | null> {
    return this.schedules.getSchedule(id);
  }

  /** One page of live schedules by id, optionally of one handler: one script. */
  listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    return this.schedules.listSchedules(query);
  }

  /**
   * Push capability via pub/sub on a duplicate of your client (made on first use, named
   * `fleetcron-watch:<prefix>:schedule-changes`), with `{ kind: 'resync' }` each time its
   * subscription takes effect (the first time and after every reconnect).
   */
  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return this.schedules.watchSchedules(listener);
  }

  /** Closes the pub/sub connections the watch methods made, if any; never your client. */
  async close(): Promise<void> {
    this.runRequests.close();
    this.schedules.close();
  }

  /** Reads up to `count` executions newest first from `start`, only `statuses` when given. */
  private async readHistory(
    job: string,
    start: string,
    count: number,
    statuses: RunStatus[] | null,
  ): Promise<Execution[]> {
    const keys = this.keysOf(job);
    const out: Execution[] = [];
    let from = start;
    for (;;) {
      const batch = statuses ? Math.max(count, FILTER_BATCH) : count;
      const values = (await this.commands.call('history', () =>
        historyScript.run(this.redis, [keys.index, keys.executions], [from, String(batch)]),
      )) as string[];
      for (const value of values) {
        const execution = decodeExecutionRow(value);
        if (!statuses || statuses.includes(execution.status)) out.push(execution);
        from = `(${indexMember(execution.startedAt, execution.id)}`;
      }
      if (!statuses || values.length < batch || out.length >= count) return out.slice(0, count);
    }
  }

  private async readStates(
    jobs: string[],
    operation: string,
  ): Promise<{ exists: boolean; state: JobState }[]> {
    if (jobs.length === 0) return [];
    const pauses = await this.commands.call(operation, () =>
      this.redis.hmget(this.fleetKeys.paused, ...jobs),
    );
    return Promise.all(
      jobs.map(async (job, i) => {
        const [oldPaused, oldPausedBy, oldPausedAt, lastStatus, lastFireAt, lastFinishedAt] =
          await this.commands.call(operation, () =>
            this.redis.hmget(
              this.keysOf(job).state,
              'paused',
              'pausedBy',
              'pausedAt',
              'lastStatus',
              'lastFireAt',
              'lastFinishedAt',
            ),
          );
        const pause = decodePause(
          pauses[i] ?? null,
          oldPaused ?? null,
          oldPausedBy ?? null,
          oldPausedAt ?? null,
        );
        return {
          exists: pause !== null || lastStatus !== null,
          state: {
            job,
            paused: pause?.paused ?? false,
            pausedBy: pause?.pausedBy ?? null,
            pausedAt: pause?.pausedAt ?? null,
            lastStatus: (lastStatus as RunStatus | null) ?? null,
            lastFireAt: lastFireAt ? Number(lastFireAt) : null,
            lastFinishedAt: lastFinishedAt ? Number(lastFinishedAt) : null,
          },
        };
      }),
    );
  }

  /**
   * The record script's KEYS and per-execution ARGV of `execution` (its row: see
   * `encodeExecutionRow`, which throws `InvalidOptionError` before anything is sent).
   */
  private writeOf(execution: Execution): RecordWrite {
    const { id, job, startedAt } = execution;
    const row = encodeExecutionRow(execution, this.maxErrorLength);
    const keys = this.keysOf(job);
    return {
      job,
      keys: [keys.index, keys.executions, keys.state],
      args: [
        id,
        indexMember(startedAt, id),
        row,
        isTerminal(execution.status) ? '1' : '0',
        execution.status,
        String(execution.fireAt),
        execution.finishedAt === null ? '' : String(execution.finishedAt),
      ],
    };
  }

  /** The record script's trailing ARGV: `maxHistory`, `maxAgeMs` (or `''`). */
  private get trimArgs(): string[] {
    return [String(this.maxHistory), this.maxAgeMs === undefined ? '' : String(this.maxAgeMs)];
  }

  /**
   * On a Cluster: the hash slot of a job's keys (with the client's `keyPrefix`, as the server
   * sees them). On a single node: `undefined` (any keys may share a script call).
   */
  private slotOf(): ((write: RecordWrite) => number) | undefined {
    if (!this.redis.isCluster) return undefined;
    const keyPrefix = this.redis.options.keyPrefix ?? '';
    return (write) => hashSlot(keyPrefix + write.keys[0]!);
  }

  private keysOf(job: string): StoreKeys {
    return storeKeys(this.prefix, job);
  }
}

/** A job's pause state, or `null` when it was never paused or resumed. */
type Pause = Pick<JobState, 'paused' | 'pausedBy' | 'pausedAt'>;

/**
 * The pause state of a job from the fleet's pause hash (`1|<pausedAt>|<pausedBy>` or `0`), or,
 * when it has no entry there, from the fields a store before 0.2 kept in the job's state hash.
 */
function decodePause(
  value: string | null,
  oldPaused: string | null,
  oldPausedBy: string | null,
  oldPausedAt: string | null,
): Pause | null {
  if (value === null) {
    if (oldPaused === null) return null;
    return {
      paused: oldPaused === '1',
      pausedBy: oldPausedBy ?? null,
      pausedAt: oldPausedAt ? Number(oldPausedAt) : null,
    };
  }
  if (value === '0') return { paused: false, pausedBy: null, pausedAt: null };
  const bar = value.indexOf('|', 2);
  const by = value.slice(bar + 1);
  return { paused: true, pausedAt: Number(value.slice(2, bar)), pausedBy: by === '' ? null : by };
}
