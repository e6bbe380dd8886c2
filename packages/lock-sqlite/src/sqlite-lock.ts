import {
  type BatchOptions,
  type ClaimRequest,
  type ClaimResult,
  InvalidOptionError,
  type Lease,
  type Lock,
  type LockCapabilities,
  type LockInspection,
  type MarkReading,
} from '@fleetcron/core';
import {
  assertBatchSize,
  assertClaimRequest,
  assertLockKey,
  DEFAULT_EARLY_TOLERANCE_MS,
  DEFAULT_WINDOW_MS,
} from '@fleetcron/core/backend';
import {
  resolveSource,
  type SqliteExecutor,
  type SqliteSource,
  type SqliteSourceOptions,
} from '@fleetcron/sqlite-shared';
import { type ClaimArgs, type ExtendArgs, lockOperations } from './operations.js';

/**
 * Most requests one `claimMany` (or `extendMany`, `releaseMany`) takes: one transaction holds the
 * file's write lock while it runs (about 10 µs per claim), so other processes wait at most a few
 * ms for a full batch.
 */
export const SQLITE_MAX_BATCH = 1_000;

/**
 * What the SQLite lock can do. `clock: 'backend'`: the backend is the host, and every process on
 * it reads the same system clock (`Date.now()` inside the transaction, returned as the answers'
 * `backendTime`); a per-scheduler clock passed to the scheduler never judges expiry or
 * staleness. Durable: records are on disk. Claims more than `earlyToleranceMs` (option, default
 * 250) ahead of the host clock are refused `early`. The catch-up mark is a row of the file too.
 */
export const SQLITE_LOCK_CAPABILITIES: LockCapabilities = Object.freeze({
  minLeaseMs: 1,
  leaseGranularityMs: 1,
  durable: true,
  clock: 'backend',
  earlyToleranceMs: DEFAULT_EARLY_TOLERANCE_MS,
  durableMark: true,
  maxBatch: SQLITE_MAX_BATCH,
});

/** Options of {@link SqliteLock}. */
export interface SqliteLockOptions extends SqliteSourceOptions {
  /** Claim window in ms. Default 5 minutes. */
  windowMs?: number;
  /**
   * A claim for a fire more than this far ahead of the host clock is refused `early` (the
   * scheduler claims it again when the fleet's clock reaches it), in whole ms. Default 250.
   */
  earlyToleranceMs?: number;
  /** How often expired claim records and leases are deleted, in ms. Default 1000. `0`: never (only on claims). */
  collectIntervalMs?: number;
}

const BACKEND = 'sqlite';

/**
 * A {@link Lock} on a SQLite file shared by the processes of one host (PM2 cluster mode,
 * `node:cluster`, containers sharing a volume). Pass a file path (the lock opens its own
 * connection in a worker thread and closes it on `close()`) or your libsql `Database`
 * (used on your thread, never closed by the lock). Each claim is one `BEGIN IMMEDIATE`
 * transaction.
 */
export class SqliteLock implements Lock {
  readonly backend = BACKEND;
  readonly capabilities: LockCapabilities;
  readonly windowMs: number;
  private readonly executor: SqliteExecutor;
  private readonly collector: NodeJS.Timeout | null;
  private collecting = false;

  constructor(database: SqliteSource, options: SqliteLockOptions = {}) {
    this.windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    if (!(Number.isInteger(this.windowMs) && this.windowMs > 0)) {
      throw new InvalidOptionError(
        'windowMs',
        'must be a positive integer of ms (default 300000).',
      );
    }
    const earlyToleranceMs = options.earlyToleranceMs ?? DEFAULT_EARLY_TOLERANCE_MS;
    if (!(Number.isInteger(earlyToleranceMs) && earlyToleranceMs >= 0)) {
      throw new InvalidOptionError(
        'earlyToleranceMs',
        'must be a non-negative integer of ms (default 250).',
      );
    }
    this.capabilities = { ...SQLITE_LOCK_CAPABILITIES, earlyToleranceMs };
    const interval = options.collectIntervalMs ?? 1000;
    if (!(Number.isInteger(interval) && interval >= 0)) {
      throw new InvalidOptionError(
        'collectIntervalMs',
        'must be a non-negative integer of ms (0 = off).',
      );
    }
    this.executor = resolveSource(
      database,
      options,
      {
        module: { url: operationsUrl(), exportName: 'lockOperations' },
        set: lockOperations,
      },
      BACKEND,
    ).executor;
    this.collector = interval > 0 ? setInterval(() => this.collect(), interval) : null;
    this.collector?.unref();
  }

  /**
   * Opens the connection (starting its worker thread) and creates the tables if missing. Optional:
   * the first call does it otherwise. Call it at startup to fail fast on a bad path.
   */
  open(): Promise<void> {
    return this.executor.open();
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    return this.executor.run<ClaimResult>('claim', this.claimArgs(request), request.signal);
  }

  /**
   * Claims every request in one `BEGIN IMMEDIATE` transaction (one message to the worker thread),
   * in array order, each answered exactly as {@link claim} would answer it alone; the host clock
   * is read once for the batch. At most `SQLITE_MAX_BATCH` requests (`InvalidOptionError`
   * beyond); every request is checked before any is sent. An aborted `options.signal` rejects
   * with `BackendUnavailableError` and nothing runs (see "A claim given up on" in the README).
   */
  async claimMany(
    requests: readonly ClaimRequest[],
    options: BatchOptions = {},
  ): Promise<ClaimResult[]> {
    assertBatchSize(requests, SQLITE_MAX_BATCH);
    const list = requests.map((request, i) => this.claimArgs(request, `requests[${i}].`));
    if (list.length === 0) return [];
    return this.executor.run<ClaimResult[]>('claimMany', list, options.signal);
  }

  extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    return this.executor.run<Lease | null>('extend', { lease: plain(lease), leaseMs });
  }

  /** Renews every lease in one transaction: `results[i]` is what `extend(leases[i], leaseMs[i])` answers. */
  async extendMany(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options: BatchOptions = {},
  ): Promise<(Lease | null)[]> {
    assertBatchSize(leases, SQLITE_MAX_BATCH);
    if (!Array.isArray(leaseMs) || leaseMs.length !== leases.length) {
      throw new InvalidOptionError(
        'leaseMs',
        'must be an array as long as leases (one per lease).',
      );
    }
    const list: ExtendArgs[] = leases.map((lease, i) => ({
      lease: plain(lease),
      leaseMs: leaseMs[i] as number,
    }));
    if (list.length === 0) return [];
    return this.executor.run<(Lease | null)[]>('extendMany', list, options.signal);
  }

  release(lease: Lease): Promise<boolean> {
    return this.executor.run<boolean>('release', plain(lease));
  }

  /** Releases every lease in one transaction: `results[i]` is what `release(leases[i])` answers. */
  async releaseMany(leases: readonly Lease[], options: BatchOptions = {}): Promise<boolean[]> {
    assertBatchSize(leases, SQLITE_MAX_BATCH);
    if (leases.length === 0) return [];
    return this.executor.run<boolean[]>('releaseMany', leases.map(plain), options.signal);
  }

  withdraw(lease: Lease): Promise<boolean> {
    return this.executor.run<boolean>('withdraw', plain(lease));
  }

  async inspect(key: string): Promise<LockInspection> {
    assertLockKey(key);
    return this.executor.run<LockInspection>('inspect', key);
  }

  /**
   * Reads the marks of many keys (see {@link Lock.readMarks}) in one read transaction (one
   * message to the worker thread; one primary-key lookup per key, no write lock), with the host's
   * clock as `backendTime`. Any number of keys; every key is checked before anything is sent;
   * an aborted `options.signal` rejects with `BackendUnavailableError` and nothing runs.
   */
  async readMarks(keys: readonly string[], options: BatchOptions = {}): Promise<MarkReading> {
    if (!Array.isArray(keys)) {
      throw new InvalidOptionError('keys', `must be an array of keys, got ${typeof keys}`);
    }
    for (const key of keys) assertLockKey(key);
    if (keys.length === 0) return { marks: [] };
    return this.executor.run<MarkReading>('readMarks', [...keys], options.signal);
  }

  /** How many claim records the file holds, all keys together (for tests and dashboards). */
  claimRecordCount(): Promise<number> {
    return this.executor.run<number>('count', null);
  }

  /** Stops the collector and closes the connection the lock opened (never your `Database`). */
  async close(): Promise<void> {
    if (this.collector) clearInterval(this.collector);
    await this.executor.close();
  }

  /** The checked arguments of one claim; `field` prefixes the field named by an error. */
  private claimArgs(request: ClaimRequest, field = ''): ClaimArgs {
    const { key, fireAt, owner, leaseMs, exclusive } = request;
    if (!Number.isSafeInteger(fireAt)) {
      throw new InvalidOptionError(`${field}fireAt`, 'must be an integer of epoch ms.');
    }
    if (!(Number.isSafeInteger(leaseMs) && leaseMs > 0)) {
      throw new InvalidOptionError(`${field}leaseMs`, 'must be a positive integer of ms.');
    }
    assertClaimRequest(request);
    return {
      ...{ key, fireAt, owner, leaseMs, exclusive, windowMs: this.windowMs },
      earlyToleranceMs: this.capabilities.earlyToleranceMs ?? DEFAULT_EARLY_TOLERANCE_MS,
      since: request.catchUp?.since ?? null,
    };
  }

  /** One collection pass; a failure (file busy) is retried on the next tick. */
  private collect(): void {
    if (this.collecting) return;
    this.collecting = true;
    this.executor
      .run('collect', null)
      .catch(() => {})
      .finally(() => {
        this.collecting = false;
      });
  }
}

/** A lease as plain data (a caller may pass an object with extra fields or prototypes). */
const plain = (lease: Lease): Lease => ({
  key: lease.key,
  fireAt: lease.fireAt,
  owner: lease.owner,
  token: lease.token,
  expiresAt: lease.expiresAt,
  exclusive: lease.exclusive,
});

/** URL of `operations.ts` (sources) or `operations.js` (build), for the worker thread. */
function operationsUrl(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./operations.${ext}`, import.meta.url).href;
}
