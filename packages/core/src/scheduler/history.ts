import { randomUUID } from 'node:crypto';
import { BackendUnavailableError, toError } from '../errors.js';
import type { Execution, RunStatus, Store } from '../store.js';
import { settleWithin, type TimerSource } from './deadline.js';
import type { SkipReason } from './fire-events.js';
import { safeCall } from './safe.js';

/**
 * Writes execution history for one scheduler. Every write is bounded in time and contained: a
 * failing or hanging store is reported and never affects a run. Knows which writes are still
 * pending, so `stop()` can wait for them.
 */
export class HistoryWriter {
  private readonly pending = new Set<Promise<void>>();

  /** @param store where history goes; `null` records nothing. */
  constructor(
    private readonly store: Store | null,
    private readonly timers: TimerSource,
  ) {}

  /** Whether there is a store to write to. */
  get enabled(): boolean {
    return this.store !== null;
  }

  /**
   * Records `execution`, giving up after `boundMs`; a failure or timeout goes to `onFailed`.
   * Never rejects.
   */
  write(execution: Execution, boundMs: number, onFailed: (error: Error) => void): Promise<void> {
    const store = this.store;
    if (!store) return Promise.resolve();
    const write = settleWithin(
      safeCall(() => store.record(execution)),
      boundMs,
      () =>
        new BackendUnavailableError(
          store.backend,
          'record',
          new Error(`no answer in ${boundMs} ms`),
        ),
      this.timers,
    ).catch((error: unknown) => onFailed(toError(error)));
    this.pending.add(write);
    void write.then(() => this.pending.delete(write));
    return write;
  }

  /** Resolves once every write issued so far was answered or given up on. */
  idle(): Promise<void> {
    return Promise.all([...this.pending]).then(() => undefined);
  }
}

/** Text kept in the store for an error: its stack (which starts with the message). */
function errorText(error: Error | null): string | null {
  if (error === null) return null;
  return error.stack ?? `${error.name}: ${error.message}`;
}

/**
 * The history of ONE fire: at most one row, written in order (`running`, then one terminal
 * status). The first terminal status wins; later ones are ignored, so a run recorded `aborted`
 * by `stop()` or `lease_lost` at its deadline is never overwritten when its job settles later.
 */
export class FireHistory {
  private chain: Promise<void> = Promise.resolve();
  private row: Execution | null = null;
  private ended = false;

  constructor(
    private readonly writer: HistoryWriter,
    /** Told about every failed or timed-out write (publishes `store.failed`, logs). */
    private readonly onFailed: (error: Error) => void,
    private readonly fire: { job: string; fireAt: number; instanceId: string },
    /** Bound on each write, ms. */
    private readonly boundMs: number,
  ) {}

  /** Whether the fire already has its terminal row. */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Records `running`; resolves once written, failed or given up on. */
  started(token: number, startedAt: number): Promise<void> {
    if (!this.writer.enabled || this.ended) return Promise.resolve();
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
    void this.enqueue({
      id: this.row?.id ?? randomUUID(),
      ...this.fire,
      status: 'skipped',
      attempt: 0,
      token,
      startedAt: at,
      finishedAt: at,
      error: errorText(error),
      reason,
    });
    return true;
  }

  /** Records the terminal status of a started run. Returns false when one was recorded already. */
  finished(status: RunStatus, attempt: number, error: Error | null, at: number): boolean {
    if (this.ended) return false;
    this.ended = true;
    if (this.row) {
      void this.enqueue({ ...this.row, status, attempt, finishedAt: at, error: errorText(error) });
    }
    return true;
  }

  /** Resolves once every write of this fire was answered or given up on. Never rejects. */
  flushed(): Promise<void> {
    return this.chain;
  }

  private enqueue(execution: Execution): Promise<void> {
    if (!this.writer.enabled) return this.chain;
    const row = { ...execution };
    this.chain = this.chain.then(() => this.writer.write(row, this.boundMs, this.onFailed));
    return this.chain;
  }
}
