import { FleetcronError, InvalidOptionError, SchedulerStoppedError, toError } from '../errors.js';
import type { Logger } from '../middleware.js';
import type { Execution } from '../store.js';
import { assertNonEmptyString, assertNonNegativeMs } from '../validate.js';
import { ClaimLimiter } from './claim-limiter.js';
import { nextFire, planFires } from './fire-plan.js';
import { type JobDefinition, type NormalizedJob, type OverlapPolicy, validateJob } from './job.js';
import { type ResolvedOptions, resolveOptions, type SchedulerOptions } from './options.js';
import { type FireDeps, FireRun } from './run-fire.js';
import { safeLogger, safePublish } from './safe.js';
import { type QueueEntry, TimerQueue } from './timer-queue.js';

export { defaultInstanceId } from './instance-id.js';
export type { JobDefinition, OverlapPolicy } from './job.js';
export { MAX_JOB_NAME_LENGTH } from './job.js';
export { abortMarginMs } from './lease-keeper.js';
export type { SchedulerOptions } from './options.js';
export { DEFAULT_DRAIN_MS, DEFAULT_LEASE_MS } from './options.js';

/**
 * After the drain deadline `stop()` aborts running jobs and waits at most this long for them to
 * settle, and at most this long again for their leases to be released.
 */
export const STOP_GRACE_MS = 1_000;

/** Options of {@link Scheduler.stop}. */
export interface StopOptions {
  /** How long to wait for running jobs before aborting them, ms. Default: the scheduler's `drainMs`. */
  drainMs?: number;
}

/** A registered job, as listed by {@link Scheduler.jobs}. */
export interface JobInfo {
  name: string;
  /** The trigger's description, e.g. `every(2000ms)`. */
  trigger: string;
  /**
   * The next fire this scheduler will claim; while the scheduler is not started, the trigger's
   * next fire after now. `null` when the trigger is done.
   */
  nextFireAt: Date | null;
  leaseMs: number;
  overlap: OverlapPolicy;
  /** Fires of this job being claimed or run on this instance right now. */
  active: number;
}

/** Lifecycle state of a {@link Scheduler}. */
export type SchedulerState = 'idle' | 'running' | 'stopping';

interface JobSlot {
  readonly def: NormalizedJob;
  nextFireAt: number | null;
  entry: QueueEntry | null;
}

type Phase = 'idle' | 'running' | 'draining' | 'aborting';

/**
 * Runs jobs on a fleet: every instance runs the same scheduler with the same jobs, and each fire
 * runs on exactly one instance, the one that claims it in the shared {@link Lock}.
 *
 * One timer serves every job and every lease renewal. Per fire: claim → (paused check) → record
 * `running` → run the middleware chain while renewing the lease every third of it → record the
 * outcome → release the lease. Lock, store, listener and job failures never crash the process.
 *
 * The scheduler does not close the lock or the store: the caller created them and closes them
 * after `await scheduler.stop()`.
 *
 * @example
 * const scheduler = new Scheduler({ lock: new MemoryLock() });
 * scheduler.add({ name: 'report', trigger: cron('0 * * * *'), run: async (ctx) => { ... } });
 * scheduler.start();
 * // on shutdown
 * await scheduler.stop();
 */
export class Scheduler {
  /** This instance's id: the owner of its claims and the `instanceId` of its events. */
  readonly instanceId: string;
  private readonly options: ResolvedOptions;
  private readonly queue: TimerQueue;
  private readonly slots = new Map<string, JobSlot>();
  private readonly fires = new Set<FireRun>();
  private readonly writes = new Set<Promise<void>>();
  private readonly log: Logger;
  private readonly deps: FireDeps;
  private phase: Phase = 'idle';
  private stopping: Promise<void> | null = null;

  /** Validates `options` (typed errors naming the field) and creates an idle scheduler. */
  constructor(options: SchedulerOptions) {
    this.options = resolveOptions(options);
    this.instanceId = this.options.instanceId;
    this.log = safeLogger(this.options.logger, { instanceId: this.instanceId });
    this.queue = new TimerQueue(this.options.clock, (error) => {
      this.log.error('fleetcron: timer callback failed', { error: toError(error) });
    });
    const { lock, store, clock, middleware } = this.options;
    this.deps = {
      lock,
      store,
      clock,
      queue: this.queue,
      instanceId: this.instanceId,
      logger: this.options.logger,
      middleware,
      acceptsRuns: () => this.phase === 'running' || this.phase === 'draining',
      acceptsClaims: () => this.phase === 'running',
      claims: new ClaimLimiter(this.options.maxConcurrentClaims),
      write: (execution) => this.write(execution),
    };
  }

  /** `idle` (not started, or stopped), `running`, or `stopping` (inside `stop()`). */
  get state(): SchedulerState {
    if (this.phase === 'running') return 'running';
    return this.phase === 'idle' ? 'idle' : 'stopping';
  }

  /**
   * Registers a job; while running, its first fire is scheduled at once. Synchronous. Throws
   * {@link InvalidOptionError} (code `INVALID_OPTION`, `field` naming the option),
   * `DuplicateJobError` (`DUPLICATE_JOB`) or `LeaseTooShortError` (`LEASE_TOO_SHORT`).
   */
  add(job: JobDefinition): void {
    const { lock, clock, leaseMs } = this.options;
    const def = validateJob(job, {
      existing: this.slots,
      defaultLeaseMs: leaseMs,
      capabilities: lock.capabilities,
      backend: lock.backend,
      now: clock.now(),
    });
    const slot: JobSlot = { def, nextFireAt: null, entry: null };
    this.slots.set(def.name, slot);
    if (this.phase === 'running') this.scheduleFirst(slot);
  }

  /**
   * Unregisters a job: no further fires are claimed. A run in progress finishes normally.
   * Returns whether a job of that name was registered.
   */
  remove(name: string): boolean {
    const slot = this.slots.get(name);
    if (!slot) return false;
    if (slot.entry) this.queue.cancel(slot.entry);
    slot.entry = null;
    this.slots.delete(name);
    return true;
  }

  /**
   * Starts claiming fires: each job's next fire after now is scheduled (fires that passed before
   * `start()` are not caught up). A no-op when running. A stopped scheduler may be started again.
   * Throws `SchedulerStoppedError` while `stop()` is still in progress.
   */
  start(): void {
    if (this.phase === 'running') return;
    if (this.phase !== 'idle') {
      throw new SchedulerStoppedError('start() while stop() is in progress; await stop() first');
    }
    this.phase = 'running';
    for (const slot of this.slots.values()) this.scheduleFirst(slot);
  }

  /**
   * Stops the scheduler: claims stop at once; running jobs get `drainMs` to finish, then their
   * `ctx.signal` is aborted with `SchedulerStoppedError` and they get {@link STOP_GRACE_MS} to
   * settle; leases are released and the timer cleared, so nothing of the scheduler keeps the
   * process alive. Does NOT close the lock or the store. Calling it again while it runs returns
   * the same promise. Never rejects except for an invalid `drainMs`.
   */
  stop(options: StopOptions = {}): Promise<void> {
    if (this.stopping) return this.stopping;
    const drainMs = options.drainMs ?? this.options.drainMs;
    try {
      assertNonNegativeMs('drainMs', drainMs);
    } catch (error) {
      return Promise.reject(error);
    }
    this.stopping = this.shutdown(drainMs).finally(() => {
      this.stopping = null;
    });
    return this.stopping;
  }

  /** The registered jobs and their next fire. */
  jobs(): JobInfo[] {
    const counts = new Map<string, number>();
    for (const fire of this.fires) {
      counts.set(fire.job.name, (counts.get(fire.job.name) ?? 0) + 1);
    }
    return [...this.slots.values()].map((slot) => ({
      name: slot.def.name,
      trigger: slot.def.trigger.describe(),
      nextFireAt: this.peekNext(slot),
      leaseMs: slot.def.leaseMs,
      overlap: slot.def.overlap,
      active: counts.get(slot.def.name) ?? 0,
    }));
  }

  /**
   * Pauses a job fleet-wide through the store: fires are still claimed (so nobody else runs
   * them) but recorded as `skipped` (reason `paused`) instead of run. Rejects with
   * `InvalidOptionError` (field `store`) without a store, and `UNKNOWN_JOB` for an unknown name.
   */
  async pause(name: string): Promise<void> {
    await this.setPaused(name, true);
  }

  /** Resumes a job paused with {@link Scheduler.pause}, fleet-wide. */
  async resume(name: string): Promise<void> {
    await this.setPaused(name, false);
  }

  private async setPaused(name: string, paused: boolean): Promise<void> {
    const store = this.options.store;
    if (!store) {
      throw new InvalidOptionError(
        'store',
        `${paused ? 'pause' : 'resume'}() needs a store: pass { store } to new Scheduler().`,
      );
    }
    assertNonEmptyString('name', name);
    if (!this.slots.has(name)) {
      throw new FleetcronError(
        'UNKNOWN_JOB',
        `no job named ${JSON.stringify(name)} is registered on this scheduler.`,
        { field: 'name' },
      );
    }
    await store.setPaused(name, paused);
  }

  private peekNext(slot: JobSlot): Date | null {
    if (this.phase === 'running') {
      return slot.nextFireAt === null ? null : new Date(slot.nextFireAt);
    }
    try {
      const next = nextFire(slot.def.trigger, this.options.clock.now());
      return next === null ? null : new Date(next);
    } catch {
      return null;
    }
  }

  private scheduleFirst(slot: JobSlot): void {
    let first: number | null;
    try {
      first = nextFire(slot.def.trigger, this.options.clock.now());
    } catch (error) {
      this.triggerFailed(slot, error);
      return;
    }
    this.schedule(slot, first);
  }

  private schedule(slot: JobSlot, fireAt: number | null): void {
    slot.nextFireAt = fireAt;
    if (fireAt === null) {
      this.log.info('fleetcron: job has no further fires', { job: slot.def.name });
      return;
    }
    slot.entry = this.queue.atWall(fireAt, () => this.onDue(slot));
    safePublish({
      type: 'fire.scheduled',
      instanceId: this.instanceId,
      job: slot.def.name,
      fireAt,
      at: this.options.clock.now(),
    });
  }

  private triggerFailed(slot: JobSlot, error: unknown): void {
    slot.nextFireAt = null;
    slot.entry = null;
    this.log.error('fleetcron: trigger failed; the job gets no further fires', {
      job: slot.def.name,
      error: toError(error),
    });
  }

  /** The single timer woke for this job's next fire. */
  private onDue(slot: JobSlot): void {
    slot.entry = null;
    const due = slot.nextFireAt;
    if (this.phase !== 'running' || this.slots.get(slot.def.name) !== slot || due === null) return;
    const { clock, lock } = this.options;
    const now = clock.now();
    let plan: ReturnType<typeof planFires>;
    try {
      plan = planFires(slot.def.trigger, due, now, lock.windowMs);
    } catch (error) {
      this.triggerFailed(slot, error);
      return;
    }
    for (const fireAt of plan.missed) {
      safePublish({
        type: 'fire.missed',
        instanceId: this.instanceId,
        job: slot.def.name,
        fireAt,
        at: now,
        lateMs: now - fireAt,
      });
    }
    if (plan.missed.length > 0) {
      this.log.warn('fleetcron: woke late; older passed fires are not claimed here', {
        job: slot.def.name,
        missed: plan.missed.length,
        moreUnlisted: plan.unlisted,
        claiming: plan.claim === null ? null : new Date(plan.claim).toISOString(),
      });
    }
    this.schedule(slot, plan.next);
    if (plan.claim !== null) this.launch(slot.def, plan.claim);
  }

  private launch(job: NormalizedJob, fireAt: number): void {
    const fire = new FireRun(this.deps, job, fireAt);
    this.fires.add(fire);
    void fire.done.then(() => {
      this.fires.delete(fire);
    });
  }

  /** Writes history; a failing store is reported and never affects the run. Never rejects. */
  private write(execution: Execution): Promise<void> {
    const store = this.options.store;
    if (!store) return Promise.resolve();
    const write = (async () => {
      try {
        await store.record(execution);
      } catch (thrown) {
        const error = toError(thrown);
        safePublish({
          type: 'store.failed',
          instanceId: this.instanceId,
          job: execution.job,
          fireAt: execution.fireAt,
          at: this.options.clock.now(),
          error,
        });
        this.log.warn('fleetcron: could not write history', {
          job: execution.job,
          status: execution.status,
          error,
        });
      }
    })();
    this.writes.add(write);
    void write.then(() => {
      this.writes.delete(write);
    });
    return write;
  }

  private async shutdown(drainMs: number): Promise<void> {
    if (this.phase === 'idle') {
      this.queue.clear();
      return;
    }
    this.phase = 'draining';
    for (const slot of this.slots.values()) {
      if (slot.entry) this.queue.cancel(slot.entry);
      slot.entry = null;
    }
    const settled = () =>
      Promise.all([...this.fires].map((f) => f.done)).then(() => Promise.all([...this.writes]));
    if (!(await this.within(settled(), drainMs))) {
      this.phase = 'aborting';
      const reason = new SchedulerStoppedError('run past the drain deadline of stop()');
      for (const fire of this.fires) fire.abort(reason);
      if (!(await this.within(settled(), STOP_GRACE_MS))) {
        const left = [...this.fires];
        this.log.warn('fleetcron: jobs ignored their aborted signal; releasing their leases', {
          jobs: left.map((f) => f.job.name),
        });
        await this.within(Promise.all(left.map((f) => f.releaseLease())), STOP_GRACE_MS);
      }
    }
    this.queue.clear();
    this.phase = 'idle';
  }

  /** Waits for `promise` at most `ms` (on the scheduler's clock); true when it settled in time. */
  private async within(promise: Promise<unknown>, ms: number): Promise<boolean> {
    const timer = this.queue.sleep(ms);
    let settled = false;
    try {
      await Promise.race([
        promise.then(() => {
          settled = true;
        }),
        timer.promise,
      ]);
    } finally {
      timer.cancel();
    }
    return settled;
  }
}
