import { BackendUnavailableError, toError } from '../errors.js';
import type { Logger } from '../middleware.js';
import type { Execution, Store } from '../store.js';
import { settleWithin, type TimerSource } from './deadline.js';
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
