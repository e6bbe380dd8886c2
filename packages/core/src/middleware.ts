import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { JsonValue, ScheduleRef } from './schedules/schedule.js';
import type { ShardInfo } from './shards/shard-info.js';

/**
 * The job's lease, as the job sees it (`ctx.lease`). The scheduler checks the lease at every step
 * of a fire; a job checks it too, right before a side effect that must not happen twice.
 *
 * @example
 * run: async (ctx) => {
 *   const invoice = await buildInvoice(ctx.signal); // slow; the process may freeze in here
 *   ctx.lease.assertValid(); // synchronous: throws LeaseLostError once past the lease's deadline
 *   await payments.charge(invoice, { fencingToken: ctx.lease.token });
 * }
 */
export interface JobLease {
  /** Fencing token of the lease: pass it to systems that can refuse a stale holder. */
  readonly token: number;
  /**
   * Milliseconds left before the local deadline (claim or last renewal SENT + lease − margin, on
   * the monotonic clock); renewals move it. 0 once the lease is lost.
   */
  remainingMs(): number;
  /**
   * Throws `LeaseLostError` (code `LEASE_LOST`) when the deadline has passed, aborting
   * `ctx.signal` with it if it was not already. Synchronous: it reads the clock itself, so it is
   * right even just after the process was frozen, before any timer had a chance to run.
   */
  assertValid(): void;
}

/** What a running job (and each middleware) sees. */
export interface JobContext {
  /** The job's name. */
  readonly job: string;
  /** The scheduled fire time. */
  readonly fireAt: Date;
  /** When this run started, on the instance's clock. */
  readonly startedAt: Date;
  /** The instance running the job. */
  readonly instanceId: string;
  /** 1 on the first attempt; `retry()` increases it for each further attempt. */
  readonly attempt: number;
  /** Fencing token of the lease: pass it to downstream systems so they can refuse stale writers. Same as `lease.token`. */
  readonly token: number;
  /** The lease: token, time left, and a synchronous validity check to call before side effects. */
  readonly lease: JobLease;
  /**
   * Aborted when the lease is lost (`LeaseLostError`), the scheduler stops past its drain
   * deadline (`SchedulerStoppedError`), or a timeout fires (`JobTimeoutError`).
   */
  readonly signal: AbortSignal;
  /** Logger with the job's name and fire time attached. */
  readonly log: Logger;
  /** The scheduler's clock; middleware sleeps on it so tests can use a fake clock. */
  readonly clock: Clock;
  /**
   * Who asked for this run when it is a manual fire (`scheduler.trigger()` or a fleet run
   * request); `null` for a scheduled fire. Always set by the scheduler.
   */
  readonly requestedBy?: string | null;
  /**
   * `true` when this run re-runs a fire whose holder died (`onHolderLost: 'rerun'`): the
   * first run may have done part of the work. Always set by the scheduler.
   */
  readonly recovery?: boolean;
  /**
   * The part of a sharded fire this run is (`shards: n`: `{ index, count }`, each part runs once
   * fleet-wide; `shards: 'each'`: `{ index, count, each: true }`, this instance's position among
   * the live instances, advisory), or `null` for a plain job. Always set by the scheduler.
   */
  readonly shard?: ShardInfo | null;
  /**
   * The stored schedule this run belongs to (`{ id, data, version }`), set by `ScheduleServer`
   * for the jobs it adds; absent for code-defined jobs.
   */
  readonly schedule?: ScheduleRef;
  /**
   * The fleet run request this run answers (`FleetClient.requestRun`, `fleetcron run`):
   * `{ id, by, data }`; `null` for a scheduled fire, `scheduler.trigger()` and a holder-lost
   * rerun. Always set by the scheduler.
   */
  readonly request?: RunRequestRef | null;
}

/** The fleet run request a run answers (`ctx.request`). */
export interface RunRequestRef {
  /** The request's id (as `requestRun` returned it). */
  readonly id: string;
  /** Who asked (also `ctx.requestedBy`). */
  readonly by: string;
  /** The request's JSON payload; `null` when none was given. */
  readonly data: JsonValue;
}

/** Calls the rest of the chain, optionally with a changed context (e.g. another signal). */
export type Next = (ctx?: JobContext) => Promise<void>;

/**
 * A wrapper around a job run, like robfig/cron's chain: it may act before and after `next`,
 * call it again (retry), or not at all (skip). Middleware is composed in the order given.
 */
export type Middleware = (ctx: JobContext, next: Next) => Promise<void>;

/** The job's own function. Its return value is ignored; a throw or rejection fails the run. */
export type JobHandler = (ctx: JobContext) => unknown;

/** Composes middleware around `handler`: the first middleware is the outermost. */
export function compose(
  middleware: readonly Middleware[],
  handler: JobHandler,
): (ctx: JobContext) => Promise<void> {
  const dispatch = async (index: number, ctx: JobContext): Promise<void> => {
    const layer = middleware[index];
    if (!layer) {
      await handler(ctx);
      return;
    }
    await layer(ctx, (next = ctx) => dispatch(index + 1, next));
  };
  return (ctx) => dispatch(0, ctx);
}
