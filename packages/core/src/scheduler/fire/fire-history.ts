import { randomUUID } from 'node:crypto';
import type { Logger } from '../../logger.js';
import type { ShardInfo } from '../../shards/shard-info.js';
import type { Execution, RunStatus } from '../../store.js';
import type { NormalizedJob } from '../job/index.js';
import type { FireEvents, SkipReason } from './fire-events.js';
import type { FireKind } from './fire-types.js';
import type { HistoryWriter } from './history-writer.js';

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

/** The fire a {@link historyOfFire} is kept for (a `FireRun`). */
export interface RecordedFire {
  readonly job: NormalizedJob;
  readonly fireAt: number;
  readonly kind: FireKind;
  readonly events: FireEvents;
  readonly log: Logger;
}

/**
 * The history of `fire` on instance `instanceId` (`requestedBy` and a part's `shard` kept in its
 * row; each write bounded by a third of the lease); a failed write is published as
 * `store.failed` on the fire's events and logged.
 */
export function historyOfFire(
  writer: HistoryWriter,
  fire: RecordedFire,
  instanceId: string,
): FireHistory {
  const { job, fireAt, kind, events, log } = fire;
  const onFailed = (error: Error) => {
    events.storeFailed(error);
    log.warn('fleetcron: could not write history', { error });
  };
  const row = { job: job.name, fireAt, instanceId, requestedBy: kind.requestedBy ?? null };
  if (kind.shard) Object.assign(row, { shard: kind.shard }); // Execution.shard
  return new FireHistory(writer, onFailed, row, job.leaseMs / 3);
}
