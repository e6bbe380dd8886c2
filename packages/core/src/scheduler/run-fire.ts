import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { BackendUnavailableError, isFleetcronError, toError } from '../errors.js';
import type { ClaimResult, Lease, Lock } from '../lock.js';
import { compose, type JobContext, type Logger, type Middleware } from '../middleware.js';
import type { Execution, RunStatus, Store } from '../store.js';
import type { ClaimLimiter } from './claim-limiter.js';
import type { NormalizedJob } from './job.js';
import { LeaseKeeper } from './lease-keeper.js';
import { safeLogger, safePublish } from './safe.js';
import type { TimerQueue } from './timer-queue.js';

/** What one fire needs from its scheduler. */
export interface FireDeps {
  readonly lock: Lock;
  readonly store: Store | null;
  readonly clock: Clock;
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly logger: Logger;
  readonly middleware: readonly Middleware[];
  /** False once `stop()` gave up draining: a claim won after that is released, not run. */
  acceptsRuns(): boolean;
  /** False once `stop()` began: a fire still waiting for a claim slot is dropped unsent. */
  acceptsClaims(): boolean;
  /** Bounds the claims in flight; a fire waits here for its turn before it claims. */
  readonly claims: ClaimLimiter;
  /** Writes to the store, containing failures (publishes `store.failed`). Never rejects. */
  write(execution: Execution): Promise<void>;
}

/**
 * Settles like `promise`, or rejects with `onTimeout()` after `ms` on the scheduler's single
 * timer. A call into a lock or store that hangs must never hold a fire (or `stop()`) forever.
 */
export function withDeadline<T>(
  queue: TimerQueue,
  promise: Promise<T>,
  ms: number,
  onTimeout: () => Error,
): Promise<T> {
  const timer = queue.sleep(ms);
  return Promise.race([
    promise,
    timer.promise.then((): never => {
      throw onTimeout();
    }),
  ]).finally(() => timer.cancel());
}

/** Calls `fn`, turning a synchronous throw into a rejection. */
function call<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Text kept in the store for an error: its stack (which starts with the message). */
function errorText(error: Error): string {
  return error.stack ?? `${error.name}: ${error.message}`;
}

/** True when the run failed because a `timeout()` middleware gave up. */
function isTimeout(error: Error): boolean {
  return isFleetcronError(error, 'JOB_TIMEOUT') || isFleetcronError(error.cause, 'JOB_TIMEOUT');
}

/**
 * One fire, end to end: claim → (paused check) → record `running` → run the middleware chain
 * while a {@link LeaseKeeper} renews the lease → record the outcome → release the lease.
 * Nothing in here rejects: lock, store, job and listener failures are contained and reported.
 */
export class FireRun {
  /** Settles when the fire is completely handled (lease released, history written). */
  readonly done: Promise<void>;
  /** The won lease, while held. */
  lease: Lease | null = null;
  /** Whether the job's handler is running (for `stop()`'s abort phase). */
  running = false;
  private controller: AbortController | null = null;
  private keeper: LeaseKeeper | null = null;
  private released = false;
  private writes: Promise<void> = Promise.resolve();
  private readonly log: Logger;

  constructor(
    private readonly deps: FireDeps,
    readonly job: NormalizedJob,
    readonly fireAt: number,
  ) {
    this.log = safeLogger(deps.logger, {
      job: job.name,
      fireAt: new Date(fireAt).toISOString(),
      instanceId: deps.instanceId,
    });
    this.done = this.execute().catch((error: unknown) => {
      this.log.error('fleetcron: unexpected error while handling a fire', {
        error: toError(error),
      });
    });
  }

  /** Aborts the run's signal (a no-op before the run started or after it ended). */
  abort(reason: Error): void {
    this.controller?.abort(reason);
  }

  /** Stops renewing and releases the lease; idempotent, never rejects. */
  async releaseLease(): Promise<void> {
    this.keeper?.stop();
    const lease = this.lease;
    if (this.released || lease === null) return;
    this.released = true;
    const { lock, queue } = this.deps;
    try {
      await withDeadline(
        queue,
        call(() => lock.release(lease)),
        this.job.leaseMs / 3,
        () => new BackendUnavailableError(lock.backend, 'release', new Error('no answer in time')),
      );
    } catch (error) {
      this.log.warn('fleetcron: could not release the lease; it expires by itself', {
        error: toError(error),
        token: lease.token,
      });
    }
  }

  /** A claim we gave up on may still be won later: release that lease so it does not linger. */
  private abandon(claim: Promise<ClaimResult>): void {
    const { lock } = this.deps;
    claim.then(
      (late) => {
        if (late?.status === 'won') {
          call(() => lock.release(late.lease)).catch(() => {
            // it expires by itself
          });
        }
      },
      () => {},
    );
  }

  private event() {
    return {
      instanceId: this.deps.instanceId,
      job: this.job.name,
      fireAt: this.fireAt,
      at: this.deps.clock.now(),
    };
  }

  private record(execution: Execution): void {
    this.writes = this.writes.then(() => this.deps.write(execution));
  }

  private recordSkipped(reason: string, token: number | null, error: Error | null): void {
    safePublish({ ...this.event(), type: 'fire.skipped', reason });
    if (!this.deps.store) return;
    const now = this.deps.clock.now();
    this.record({
      id: randomUUID(),
      job: this.job.name,
      fireAt: this.fireAt,
      status: 'skipped',
      attempt: 0,
      instanceId: this.deps.instanceId,
      token,
      startedAt: now,
      finishedAt: now,
      error: error ? errorText(error) : null,
      reason,
    });
  }

  private async execute(): Promise<void> {
    try {
      await this.claimAndRun();
    } finally {
      await this.releaseLease();
      await this.writes;
    }
  }

  private async claimAndRun(): Promise<void> {
    const { lock, clock, instanceId } = this.deps;
    const job = this.job;
    const freeSlot = await this.deps.claims.acquire();
    if (!this.deps.acceptsClaims()) {
      freeSlot();
      return;
    }
    const sentAt = clock.monotonic();
    let result: ClaimResult;
    const claim = call(() =>
      lock.claim({
        key: job.name,
        fireAt: this.fireAt,
        owner: instanceId,
        leaseMs: job.leaseMs,
        exclusive: job.overlap === 'skip',
      }),
    );
    claim.then(freeSlot, freeSlot);
    try {
      // an answer later than the lease is useless (the lease would be gone): give up then
      result = await withDeadline(this.deps.queue, claim, job.leaseMs, () => {
        this.abandon(claim);
        freeSlot(); // a hung backend must not hold the slot: later fires fail closed too
        return new BackendUnavailableError(
          lock.backend,
          'claim',
          new Error(`no answer within ${job.leaseMs} ms`),
        );
      });
      if (!result || typeof result !== 'object' || !('status' in result)) {
        throw new Error(`lock ${lock.backend} answered the claim with ${String(result)}`);
      }
    } catch (thrown) {
      // fail closed: never run unprotected; the next fire claims again by itself
      const error = toError(thrown);
      safePublish({
        ...this.event(),
        type: 'claim.failed',
        backend: lock.backend,
        error,
        latencyMs: clock.monotonic() - sentAt,
      });
      this.log.warn('fleetcron: claim failed, fire skipped (fail closed)', { error });
      this.recordSkipped('backend_unavailable', null, error);
      return;
    }
    const latencyMs = clock.monotonic() - sentAt;
    if (result.status === 'lost') {
      safePublish({
        ...this.event(),
        type: 'claim.lost',
        backend: lock.backend,
        reason: result.reason,
        latencyMs,
      });
      return;
    }
    if (result.status === 'busy') {
      safePublish({ ...this.event(), type: 'claim.busy', backend: lock.backend, latencyMs });
      this.recordSkipped('overlap', null, null);
      return;
    }
    const lease = result.lease;
    this.lease = lease;
    safePublish({
      ...this.event(),
      type: 'claim.won',
      backend: lock.backend,
      token: lease.token,
      latencyMs,
    });
    if (!this.deps.acceptsRuns()) {
      this.recordSkipped('stopping', lease.token, null);
      return;
    }
    await this.runWon(lease, sentAt);
  }

  private async runWon(lease: Lease, sentAt: number): Promise<void> {
    const { clock, queue, instanceId } = this.deps;
    const job = this.job;
    const controller = new AbortController();
    this.controller = controller;
    const keeper = new LeaseKeeper({
      lock: this.deps.lock,
      lease,
      leaseMs: job.leaseMs,
      sentAt,
      clock,
      queue,
      onRenewed: (renewed) => {
        this.lease = renewed;
        safePublish({
          ...this.event(),
          type: 'lease.renewed',
          token: renewed.token,
          expiresAt: renewed.expiresAt,
        });
      },
      onLost: (error) => {
        safePublish({
          ...this.event(),
          type: 'lease.lost',
          token: lease.token,
          error: toError(error.cause ?? error),
        });
        this.log.warn('fleetcron: lease lost, aborting the run', { token: lease.token });
        controller.abort(error);
      },
    });
    this.keeper = keeper;
    keeper.start();

    if (!keeper.isLost && (await this.isPaused())) {
      this.recordSkipped('paused', lease.token, null);
      return;
    }

    const startedAt = clock.now();
    const startedMono = clock.monotonic();
    const execution: Execution = {
      id: randomUUID(),
      job: job.name,
      fireAt: this.fireAt,
      status: 'running',
      attempt: 1,
      instanceId,
      token: lease.token,
      startedAt,
      finishedAt: null,
      error: null,
      reason: null,
    };
    let attempt = 1;
    let error: Error | null = null;
    if (keeper.isLost) {
      // the claim itself took longer than the lease: never start unprotected
      error = toError(controller.signal.reason);
    } else {
      if (this.deps.store) this.record(execution);
      safePublish({
        ...this.event(),
        type: 'run.started',
        token: lease.token,
        lagMs: startedAt - this.fireAt,
      });
      const ctx: JobContext = {
        job: job.name,
        fireAt: new Date(this.fireAt),
        startedAt: new Date(startedAt),
        instanceId,
        attempt: 1,
        token: lease.token,
        signal: controller.signal,
        log: safeLogger(this.log, { token: lease.token }),
        clock,
      };
      const chain = compose([...this.deps.middleware, ...job.middleware], (c) => {
        attempt = c.attempt;
        return job.run(c);
      });
      this.running = true;
      try {
        await chain(ctx);
      } catch (thrown) {
        error = toError(thrown);
      } finally {
        this.running = false;
      }
    }
    keeper.stop();
    let status: RunStatus;
    if (keeper.isLost) {
      status = 'lease_lost';
      error = error ?? toError(controller.signal.reason);
    } else if (error === null) {
      status = 'succeeded';
    } else {
      status = isTimeout(error) ? 'timed_out' : 'failed';
    }
    if (error && status !== 'lease_lost') {
      this.log.warn('fleetcron: run failed', { status, error });
    }
    const finishedAt = clock.now();
    if (this.deps.store) {
      this.record({
        ...execution,
        status,
        attempt,
        finishedAt,
        error: error ? errorText(error) : null,
      });
    }
    safePublish({
      ...this.event(),
      type: 'run.finished',
      token: lease.token,
      status,
      attempt,
      durationMs: clock.monotonic() - startedMono,
      error,
    });
  }

  /**
   * Reads the fleet-wide paused flag. A failing or slow store (over a third of the lease) never
   * blocks the run: it counts as not paused and is reported as `store.failed`.
   */
  private async isPaused(): Promise<boolean> {
    const store = this.deps.store;
    if (!store) return false;
    try {
      const state = await withDeadline(
        this.deps.queue,
        call(() => store.getJobState(this.job.name)),
        this.job.leaseMs / 3,
        () => new Error(`store ${store.backend} did not answer getJobState in time`),
      );
      return state.paused === true;
    } catch (thrown) {
      const error = toError(thrown);
      safePublish({ ...this.event(), type: 'store.failed', error });
      this.log.warn('fleetcron: could not read the job state; running anyway', { error });
      return false;
    }
  }
}
