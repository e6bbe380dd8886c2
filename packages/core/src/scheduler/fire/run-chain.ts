import type { Clock } from '../../clock.js';
import { isFleetcronError, type LeaseLostError, toError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import {
  compose,
  type JobContext,
  type JobLease,
  type Middleware,
  type RunRequestRef,
} from '../../middleware.js';
import type { ShardInfo } from '../../shards/shard-info.js';
import type { RunStatus } from '../../store.js';
import type { NormalizedJob } from '../job/index.js';

/** What one run of the middleware chain needs. */
export interface ChainInput {
  readonly job: NormalizedJob;
  /** Scheduler middleware, outside the job's own. */
  readonly middleware: readonly Middleware[];
  readonly fireAt: number;
  readonly startedAt: number;
  readonly instanceId: string;
  readonly lease: JobLease;
  /** The job's controller: `ctx.signal` is its signal, made when the job first reads it. */
  readonly controller: { readonly signal: AbortSignal };
  readonly log: Logger;
  readonly clock: Clock;
  /** Who asked for a manual fire, `null` for a scheduled one. */
  readonly requestedBy: string | null;
  /** Re-run of a fire whose holder died. */
  readonly recovery: boolean;
  /** The fleet run request a manual fire answers (`ctx.request`), `null` otherwise. */
  readonly request: RunRequestRef | null;
  /** The part of a sharded fire (`ctx.shard`), `null` for a plain job. */
  readonly shard: ShardInfo | null;
  /** Told the attempt number each time the chain calls the job (`retry()` calls it again). */
  onAttempt(attempt: number): void;
}

/**
 * Runs scheduler middleware → job middleware → the job, with a fresh {@link JobContext}.
 * Resolves the error the chain ended with (any thrown value made an `Error`), or `null`.
 * Never rejects. `ctx.signal` is a getter: an `AbortSignal` (an `EventTarget`, ~1 KB) is made
 * only for a job or middleware that reads it; a job that never does costs none.
 */
export async function runChain(input: ChainInput): Promise<Error | null> {
  const { job, lease, controller } = input;
  const layers = input.middleware.length + job.middleware.length;
  const ctx: JobContext = {
    job: job.name,
    fireAt: new Date(input.fireAt),
    startedAt: new Date(input.startedAt),
    instanceId: input.instanceId,
    attempt: 1,
    token: lease.token,
    lease,
    get signal() {
      return controller.signal;
    },
    log: input.log,
    clock: input.clock,
    requestedBy: input.requestedBy,
    recovery: input.recovery,
    shard: input.shard,
    request: input.request,
  };
  try {
    if (layers === 0) {
      // no middleware: the job itself, as `compose` would call it (a sync throw is caught too)
      input.onAttempt(ctx.attempt);
      await job.run(ctx);
      return null;
    }
    const chain = compose([...input.middleware, ...job.middleware], (c) => {
      input.onAttempt(c.attempt);
      return job.run(c);
    });
    await chain(ctx);
    return null;
  } catch (thrown) {
    return toError(thrown);
  }
}

/** How a run is recorded. */
export interface RunVerdict {
  status: RunStatus;
  error: Error | null;
}

/** True when the run failed because a `timeout()` middleware gave up. */
function isTimeout(error: Error): boolean {
  return isFleetcronError(error, 'JOB_TIMEOUT') || isFleetcronError(error.cause, 'JOB_TIMEOUT');
}

/**
 * The status of a run, most important first: its lease was lost (`lease_lost`, whatever the job
 * did), `stop()` aborted it (`aborted`), or how the chain ended (`succeeded`, `timed_out`,
 * `failed`).
 *
 * @param error what the chain ended with (`null`: it returned, or it has not settled).
 * @param leaseLost the lease's loss, if the deadline passed.
 * @param stopped the reason `stop()` aborted the run with, if it did.
 */
export function verdictOf(
  error: Error | null,
  leaseLost: LeaseLostError | null,
  stopped: Error | null,
): RunVerdict {
  if (leaseLost) return { status: 'lease_lost', error: error ?? leaseLost };
  if (stopped) return { status: 'aborted', error: error ?? stopped };
  if (error === null) return { status: 'succeeded', error: null };
  return { status: isTimeout(error) ? 'timed_out' : 'failed', error };
}
