import {
  assertPositiveInteger,
  assertPositiveMs,
  boundErrorText,
  DEFAULT_MAX_ERROR_LENGTH,
  decodeCursor,
  type Execution,
  encodeCursor,
  type HistoryPage,
  type HistoryQuery,
  InvalidOptionError,
  type JobState,
  type RunStatus,
  type Store,
  TERMINAL_STATUSES,
} from '@fleetcron/core';
import {
  type RedisClient,
  RedisCommands,
  RedisScript,
  resolveCommandTimeoutMs,
  resolvePrefix,
} from '@fleetcron/redis-shared';
import {
  indexMember,
  MAX_STARTED_AT,
  padTime,
  registryKey,
  type StoreKeys,
  storeKeys,
} from './keys.js';
import { HISTORY, PRUNE, RECORD } from './scripts.js';

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
}

/** Default of {@link RedisStoreOptions.maxHistory}. */
export const DEFAULT_MAX_HISTORY = 1000;

/** How often (ms) a store re-adds a job it has already registered, in case the set was lost. */
const REGISTRY_REFRESH_MS = 60_000;

const recordScript = new RedisScript(RECORD);
const historyScript = new RedisScript(HISTORY);
const pruneScript = new RedisScript(PRUNE);

const isTerminal = (status: RunStatus): boolean => TERMINAL_STATUSES.includes(status);

/**
 * A {@link Store} on Redis (standalone, Sentinel or Cluster, through an ioredis client the user
 * owns). Per job: a sorted-set index ordered exactly by `(startedAt, id)`, a hash of executions
 * and a state hash, under the hash tag `{prefix:job}`. Each `record()` is one script call that
 * also updates the job state and trims the history, so memory stays bounded.
 */
export class RedisStore implements Store {
  readonly backend = 'redis';
  private readonly prefix: string;
  private readonly maxHistory: number;
  private readonly maxAgeMs: number | undefined;
  private readonly maxErrorLength: number;
  private readonly commands: RedisCommands;
  /** Jobs this store has added to the registry, with when. */
  private readonly registered = new Map<string, number>();

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
    const commandTimeoutMs = resolveCommandTimeoutMs(options.commandTimeoutMs);
    this.commands = new RedisCommands(redis, commandTimeoutMs);
  }

  async record(execution: Execution): Promise<void> {
    const { id, job, startedAt } = execution;
    if (!Number.isSafeInteger(startedAt) || startedAt < 0 || startedAt > MAX_STARTED_AT) {
      throw new InvalidOptionError(
        'startedAt',
        `must be an integer epoch ms between 0 and ${MAX_STARTED_AT}, got ${String(startedAt)}.`,
      );
    }
    const stored: Execution = {
      ...execution,
      error: boundErrorText(execution.error, this.maxErrorLength),
    };
    const keys = this.keysOf(job);
    await this.commands.call('record', async () => {
      await this.register(job);
      await recordScript.run(
        this.redis,
        [keys.index, keys.executions, keys.state],
        [
          id,
          indexMember(startedAt, id),
          padTime(startedAt) + JSON.stringify(stored),
          isTerminal(execution.status) ? '1' : '0',
          execution.status,
          String(execution.fireAt),
          execution.finishedAt === null ? '' : String(execution.finishedAt),
          String(this.maxHistory),
          this.maxAgeMs === undefined ? '' : String(this.maxAgeMs),
        ],
      );
    });
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
    const keys = this.keysOf(job);
    const values = (await this.commands.call('history', () =>
      historyScript.run(this.redis, [keys.index, keys.executions], [start, String(limit + 1)]),
    )) as string[];
    const rows = values.map((value) => JSON.parse(value.slice(16)) as Execution);
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
    let cursor = '0';
    do {
      const [next, jobs] = await this.commands.call('prune', () =>
        this.redis.sscan(registryKey(this.prefix), cursor, 'COUNT', 200),
      );
      cursor = next;
      for (const job of jobs) {
        const keys = this.keysOf(job);
        const count = await this.commands.call('prune', () =>
          pruneScript.run(this.redis, [keys.index, keys.executions], [bound]),
        );
        removed += Number(count);
      }
    } while (cursor !== '0');
    return removed;
  }

  async getJobState(job: string): Promise<JobState> {
    const [paused, lastStatus, lastFireAt, lastFinishedAt] = await this.commands.call(
      'getJobState',
      () =>
        this.redis.hmget(
          this.keysOf(job).state,
          'paused',
          'lastStatus',
          'lastFireAt',
          'lastFinishedAt',
        ),
    );
    return {
      job,
      paused: paused === '1',
      lastStatus: (lastStatus as RunStatus | null) ?? null,
      lastFireAt: lastFireAt ? Number(lastFireAt) : null,
      lastFinishedAt: lastFinishedAt ? Number(lastFinishedAt) : null,
    };
  }

  async setPaused(job: string, paused: boolean): Promise<void> {
    await this.commands.call('setPaused', () =>
      this.redis.hset(this.keysOf(job).state, 'paused', paused ? '1' : '0'),
    );
  }

  /** Nothing to free: the store holds no timers or connections of its own. */
  async close(): Promise<void> {}

  private keysOf(job: string): StoreKeys {
    return storeKeys(this.prefix, job);
  }

  /**
   * Adds `job` to the registry `prune()` walks, at most once a minute per job and process. The
   * registry is a separate key (another cluster slot), hence not inside the record script.
   */
  private async register(job: string): Promise<void> {
    const now = Date.now();
    const at = this.registered.get(job);
    if (at !== undefined && now - at < REGISTRY_REFRESH_MS) return;
    await this.redis.sadd(registryKey(this.prefix), job);
    this.registered.set(job, now);
  }
}
