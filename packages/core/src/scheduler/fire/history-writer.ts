import { BackendUnavailableError, toError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { type Execution, RECORD_BATCH_SIZE, type Store } from '../../store.js';
import { Batcher } from '../lock-calls/index.js';
import type { TimerSource } from '../timing/index.js';
import { settleWithin } from '../timing/index.js';
import { safeCall } from './safe.js';

/** The history batches' send times (not used by the writer; the batcher records them). */
const MONOTONIC = { monotonic: () => performance.now() };

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
 *
 * With a store that has `recordMany`, the first try of every write made in the same macrotask
 * (the rows of all the fires of one timer wake) goes out together, in batches of at most
 * {@link RECORD_BATCH_SIZE}, a few batches in flight at once; each write still has its own
 * bound and its own answer. A try after a failure is a single `record`, so one row the store
 * refuses fails alone.
 */
export class HistoryWriter {
  private readonly pending = new Set<Promise<void>>();
  private abandoned = new AbortController();
  /** First tries through `store.recordMany`; `null` when the store has none. */
  private readonly batches: Batcher<Execution, void> | null;

  /**
   * @param store where history goes; `null` records nothing.
   * @param onAbandoned told about each outcome still unwritten when the writer is abandoned.
   */
  constructor(
    private readonly store: Store | null,
    private readonly timers: TimerSource,
    private readonly onAbandoned: (execution: Execution) => void = () => {},
  ) {
    const recordMany = store?.recordMany?.bind(store);
    this.batches = recordMany
      ? new Batcher<Execution, void>({
          ...{ size: RECORD_BATCH_SIZE, clock: MONOTONIC, name: 'recordMany' },
          call: async (executions) => {
            await recordMany(executions);
            return executions.map(() => undefined);
          },
        })
      : null;
  }

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
      const error = await this.once(store, execution, boundMs, attempt === 0);
      if (error === null) return;
      if (attempt === 0) onFailed(error);
      if (!retry) return;
      if (abandoned.aborted || !(await this.pause(attempt, abandoned))) {
        this.onAbandoned(execution);
        return;
      }
    }
  }

  private once(
    store: Store,
    execution: Execution,
    boundMs: number,
    first: boolean,
  ): Promise<Error | null> {
    const noAnswer = () =>
      BackendUnavailableError.because(store.backend, 'record', `no answer in ${boundMs} ms`);
    const batches = first ? this.batches : null;
    const call = batches
      ? () => batches.submit(execution).then((sent) => sent?.answer)
      : () => store.record(execution);
    return settleWithin(safeCall(call), boundMs, noAnswer, this.timers)
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
