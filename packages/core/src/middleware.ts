import type { Clock } from './clock.js';

/** Minimal structured logger the job and middleware write to. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A logger that drops everything (the default). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

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
  /** Fencing token of the lease: pass it to downstream systems so they can refuse stale writers. */
  readonly token: number;
  /** Aborted when the lease is lost, the scheduler stops past its drain deadline, or a timeout fires. */
  readonly signal: AbortSignal;
  /** Logger with the job's name and fire time attached. */
  readonly log: Logger;
  /** The scheduler's clock; middleware sleeps on it so tests can use a fake clock. */
  readonly clock: Clock;
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
