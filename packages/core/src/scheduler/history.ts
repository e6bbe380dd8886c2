import { randomUUID } from 'node:crypto';
import { BackendUnavailableError, toError } from '../errors.js';
import type { Logger } from '../middleware.js';
import type { ShardInfo } from '../shards/shard-info.js';
import type { Execution, RunStatus, Store } from '../store.js';
import { settleWithin, type TimerSource } from './deadline.js';
import type { SkipReason } from './fire-events.js';
import { safeCall } from './safe.js';

/** First pause before an outcome write that failed is sent again, ms (doubles each time). */
export const OUTCOME_RETRY_MIN_MS = 100;
/** Longest pause between two tries of an outcome write, ms. */
export const OUTCOME_RETRY_MAX_MS = 5_000;

/**
 * Writes execution history for one scheduler. Every write is bounded in time and contained: a
 * failing or hanging store is reported and never affects a run. An outcome (terminal) write that
 * fails is tried again with a bounded backoff until it lands or {@link HistoryWriter.abandon} is
 * called (by `stop()` at its deadline), so a store outage shorter than the drain leaves no row
 * `running`. Knows which writes are still pending, so `stop()` can wait for them.
 */
export class HistoryWriter {
  private readonly pending = new Set<Promise<void>>();
  private abandoned = new AbortController();

  /**
   * @param store where history goes; `null` records nothing.
   * @param onAbandoned told about each outcome still unwritten when the writer is abandoned.
   */
  constructor(
    private readonly store: Store | null,
    private readonly timers: TimerSource,
    private readonly onAbandoned: (execution: Execution) => void = () => {},
  ) {}

  /** Whether there is a store to write to. */
  get enabled(): boolean {
    return this.store !== null;
  }

  /**
   * Records `execution`, each try bounded by `boundMs`; a failure or timeout goes to `onFailed`
   * (once per write). With `retry`, a failed write is sent again until it lands or the writer is
   * abandoned. Never rejects.
   */
  write(
    execution: Execution,
    boundMs: number,
    onFailed: (error: Error) => void,
    retry = false,
  ): Promise<void> {
    if (!this.store) return Promise.resolve();
    const write = this.tries(this.store, execution, boundMs, onFailed, retry);
    this.pending.add(write);
    void write.then(() => this.pending.delete(write));
    return write;
  }

  /** Resolves once every write issued so far was answered or given up on. */
  idle(): Promise<void> {
    return Promise.all([...this.pending]).then(() => undefined);
  }

  /** `stop()` is done waiting: outcome writes still being retried are given up (and reported). */
  abandon(): void {
    this.abandoned.abort();
    this.abandoned = new AbortController(); // for writes after a restart
  }

  private async tries(
    store: Store,
    execution: Execution,
    boundMs: number,
    onFailed: (error: Error) => void,
    retry: boolean,
  ): Promise<void> {
    const abandoned = this.abandoned.signal;
    for (let attempt = 0; ; attempt++) {
      const error = await this.once(store, execution, boundMs);
      if (error === null) return;
      if (attempt === 0) onFailed(error);
      if (!retry) return;
      if (abandoned.aborted || !(await this.pause(attempt, abandoned))) {
        this.onAbandoned(execution);
        return;
      }
    }
  }

  private once(store: Store, execution: Execution, boundMs: number): Promise<Error | null> {
    const noAnswer = () =>
      new BackendUnavailableError(store.backend, 'record', new Error(`no answer in ${boundMs} ms`));
    return settleWithin(
      safeCall(() => store.record(execution)),
      boundMs,
      noAnswer,
      this.timers,
    )
      .then(() => null)
      .catch((error: unknown) => toError(error));
  }

  /** Waits the backoff before try `attempt + 2`; `false` when abandoned meanwhile. */
  private pause(attempt: number, signal: AbortSignal): Promise<boolean> {
    const ms = Math.min(OUTCOME_RETRY_MAX_MS, OUTCOME_RETRY_MIN_MS * 2 ** attempt);
    return new Promise((resolve) => {
      const onAbandon = () => {
        this.timers.clearTimer(handle);
        resolve(false);
      };
      const handle = this.timers.setTimer(() => {
        signal.removeEventListener('abort', onAbandon);
        resolve(true);
      }, ms);
      signal.addEventListener('abort', onAbandon, { once: true });
    });
  }
}

/** Logs an outcome given up on by {@link HistoryWriter.abandon}, with its id. */
export function logUnwritten(log: Logger): (execution: Execution) => void {
  return (execution) => {
    log.error('fleetcron: the outcome of a run could not be written; its row may stay', {
      ...{ id: execution.id, job: execution.job, status: execution.status },
      fireAt: new Date(execution.fireAt).toISOString(),
    });
  };
}

/** Text kept in the store for an error: its stack (which starts with the message). */
function errorText(error: Error | null): string | null {
  if (error === null) return null;
  return error.stack ?? `${error.name}: ${error.message}`;
}

/** A fire's write chain before its first write: settled, and shared (a promise never changes). */
const NOTHING_WRITTEN: Promise<void> = Promise.resolve();

/**
 * The history of ONE fire: at most one row, written in order (`running`, then one terminal
 * status). The first terminal status wins; later ones are ignored, so a run recorded `aborted`
 * by `stop()` or `lease_lost` at its deadline is never overwritten when its job settles later.
 */
export class FireHistory {
  private chain: Promise<void> = NOTHING_WRITTEN;
  private tried: Promise<void> | null = null;
  private row: Execution | null = null;
  private ended = false;

  constructor(
    private readonly writer: HistoryWriter,
    /** Told about every failed or timed-out write (publishes `store.failed`, logs). */
    private readonly onFailed: (error: Error) => void,
    private readonly fire: {
      job: string;
      fireAt: number;
      instanceId: string;
      requestedBy?: string | null;
      /** The part of a sharded fire (kept as `Execution.shard`). */
      shard?: ShardInfo;
    },
    /** Bound on each write, ms. */
    private readonly boundMs: number,
  ) {}

  /** Whether the fire already has its terminal row. */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Records `running`; resolves once written, failed or given up on. `null`: nothing written. */
  started(token: number, startedAt: number): Promise<void> | null {
    if (!this.writer.enabled || this.ended) return null;
    this.row = {
      id: randomUUID(),
      ...this.fire,
      status: 'running',
      attempt: 1,
      token,
      startedAt,
      finishedAt: null,
      error: null,
      reason: null,
    };
    return this.enqueue(this.row);
  }

  /**
   * Records the fire as `skipped` (attempt 0, `startedAt = finishedAt = at`). A `running` row
   * written before (a run that then could not start) becomes this skipped row.
   */
  skipped(reason: SkipReason, token: number | null, error: Error | null, at: number): boolean {
    if (this.ended) return false;
    this.ended = true;
    void this.enqueue(
      {
        id: this.row?.id ?? randomUUID(),
        ...this.fire,
        status: 'skipped',
        attempt: 0,
        token,
        startedAt: at,
        finishedAt: at,
        error: errorText(error),
        reason,
      },
      true,
    );
    return true;
  }

  /** Records the terminal status of a started run. Returns false when one was recorded already. */
  finished(status: RunStatus, attempt: number, error: Error | null, at: number): boolean {
    if (this.ended) return false;
    this.ended = true;
    if (this.row) {
      const error_ = errorText(error);
      void this.enqueue({ ...this.row, status, attempt, finishedAt: at, error: error_ }, true);
    }
    return true;
  }

  /**
   * Resolves once every write of this fire was answered or given up on. Never rejects. `null`
   * when nothing was written (no store): nothing to wait for.
   */
  flushed(): Promise<void> | null {
    return this.chain === NOTHING_WRITTEN ? null : this.chain;
  }

  /**
   * Resolves once every write of this fire so far was tried once: answered, failed or timed out
   * (each try bounded). Retries of a failed outcome do not delay it. Never rejects. `null` when
   * nothing was written (no store): nothing to wait for.
   */
  triedOnce(): Promise<void> | null {
    return this.tried;
  }

  /** Queues a write after this fire's earlier ones; an `outcome` write is retried until it lands. */
  private enqueue(execution: Execution, outcome = false): Promise<void> {
    if (!this.writer.enabled) return this.chain;
    const row = { ...execution };
    let firstTry: () => void = () => {};
    this.tried = new Promise((resolve) => {
      firstTry = resolve;
    });
    const onFailed = (error: Error) => {
      firstTry();
      this.onFailed(error);
    };
    this.chain = this.chain
      .then(() => this.writer.write(row, this.boundMs, onFailed, outcome))
      .then(firstTry);
    return this.chain;
  }
}
