import { SchedulerStoppedError, toError } from '../errors.js';
import type { ClockOffset } from '../fleet-clock/offset-estimator.js';
import type { Logger } from '../logger.js';
import type { PauseOptions } from '../registry.js';
import { assertNonNegativeMs } from '../validate.js';
import type { ManualRunOutcome } from './fire/index.js';
import { FirePath, HistoryWriter, logUnwritten, safeLogger } from './fire/index.js';
import type { FleetControl } from './fleet-control/index.js';
import { LiveInstances, setJobPaused, unknownJob, wireFleet } from './fleet-control/index.js';
import { type JobDefinition, type JobInfo, JobSlots, validateJob } from './job/index.js';
import { LeaderGate } from './leader/index.js';
import { Lifecycle, type SchedulerState, type StopOptions } from './lifecycle.js';
import { type ResolvedOptions, resolveOptions, type SchedulerOptions } from './options.js';
import { drainFires, finishStop } from './shutdown.js';
import { ClockWatch, TimerQueue } from './timing/index.js';

/**
 * Runs jobs on a fleet: every instance runs the same scheduler with the same jobs, and each fire
 * runs on exactly one instance, the one that claims it in the shared {@link Lock}.
 *
 * One timer serves every job and every lease renewal. Per fire (see `FireRun`): claim → lease
 * keeper → (paused check, record `running`) → middleware chain → outcome, release. The lease's
 * local deadline is checked after every await. Lock, store, listener and job failures never
 * crash the process. The scheduler does not close the lock or the store (the caller's).
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
  private readonly slots: JobSlots;
  private readonly history: HistoryWriter;
  private readonly log: Logger;
  private readonly clockWatch: ClockWatch;
  /** Registry heartbeat and drift watch; `null` when the store has no fleet control. */
  private readonly fleet: FleetControl | null;
  /** Every fire starts and is tracked here (with the catch-up pass and the manual fires). */
  private readonly path: FirePath;
  /** Leader mode: the candidate, and the fires of its term. */
  private readonly gate: LeaderGate;
  /** idle → running → draining → aborting → idle; read by everything under the scheduler. */
  private readonly life = new Lifecycle();
  private stopping: Promise<void> | null = null;

  /** Validates `options` (typed errors naming the field) and creates an idle scheduler. */
  constructor(options: SchedulerOptions) {
    this.options = resolveOptions(options);
    const { lock, store, logger, instanceId } = this.options;
    this.instanceId = instanceId;
    this.log = safeLogger(logger, { instanceId });
    // every wall time of the scheduler is read on the fleet's clock (the backend's, estimated)
    this.clockWatch = new ClockWatch(this.options.clock, this.options.clockSkewWarnMs, this.log);
    const clock = this.clockWatch.clock;
    this.queue = new TimerQueue(clock, (error) => {
      this.log.error('fleetcron: timer callback failed', { error: toError(error) });
    });
    this.clockWatch.attach(this.queue);
    this.history = new HistoryWriter(store, this.queue, logUnwritten(this.log));
    this.gate = new LeaderGate({ leader: this.options.leader, instanceId, clock, log: this.log });
    // built in order, each from parts built before it: nothing below reaches back up into the
    // scheduler; the one flow back (a fire claimed here → the holder-lost check) is subscribed
    const { queue, history, log, life } = this;
    const live = new LiveInstances(instanceId);
    this.path = new FirePath({
      ...{ options: this.options, history, queue, log, life, live },
      ...{ clockWatch: this.clockWatch, gate: this.gate },
    });
    this.slots = new JobSlots({
      ...{ queue, clock, instanceId, log, windowMs: lock.windowMs, life, fires: this.path },
      // leader mode decides at the fire time whether this instance claims it (see JobSlots)
      prepareAhead: this.options.leader.mode !== 'leader',
    });
    this.fleet = wireFleet({
      ...{ options: this.options, queue, log, clock, clockWatch: this.clockWatch, history },
      ...{ path: this.path, slots: this.slots, life, live },
    });
    const fleet = this.fleet;
    if (fleet) this.path.onClaimedHere((fire) => fleet.firedHere(fire.job));
  }

  /** `idle` (not started, or stopped), `running`, or `stopping` (inside `stop()`). */
  get state(): SchedulerState {
    return this.life.state;
  }

  /**
   * Registers a job; while running, its first fire is scheduled at once. Synchronous. Throws
   * {@link InvalidOptionError} (`INVALID_OPTION`, `field` naming the option), `DuplicateJobError` (`DUPLICATE_JOB`),
   * `LeaseTooShortError` (`LEASE_TOO_SHORT`), `TriggerError` (`INVALID_TRIGGER`: `next()` did not
   * move forward), or `SchedulerStoppedError` while `stop()` is in progress.
   */
  add(job: JobDefinition): void {
    if (this.life.state === 'stopping') {
      throw new SchedulerStoppedError('add() while stop() is in progress; await stop() first');
    }
    const { lock, leaseMs } = this.options;
    const clock = this.clockWatch.clock;
    const def = validateJob(job, {
      existing: this.slots.byName,
      defaultLeaseMs: leaseMs,
      capabilities: lock.capabilities,
      backend: lock.backend,
      now: clock.now(),
      hasRegistry: this.fleet !== null,
      windowMs: lock.windowMs,
    });
    this.slots.add(def);
  }

  /** Unregisters a job (no further fires claimed; a run in progress finishes); false if unknown. */
  remove(name: string): boolean {
    this.path.dropPrepared(name); // a fire prepared ahead of its time whose claim did not leave
    return this.slots.remove(name);
  }

  /**
   * Starts claiming fires: each job's next fire after now is scheduled, and fires missed while
   * the whole fleet was down are handled per the job's `catchUp` (from the lock's mark); with a
   * fleet-control store, heartbeats and run requests start. A no-op when running; a stopped
   * scheduler may be started again (`SchedulerStoppedError` while `stop()` is in progress).
   */
  start(): void {
    if (this.life.state === 'running') return;
    if (this.life.state === 'stopping') {
      throw new SchedulerStoppedError('start() while stop() is in progress; await stop() first');
    }
    const run = this.life.start();
    // before scheduleAll(): each job's catch-up pass goes ahead of its first regular claim, and
    // the fleet's clock is learned (one round trip, bounded) before the first fire is scheduled
    const defs = this.slots.defs();
    const clockKnown = this.path.catchUps.begin(defs.filter((def) => def.shards === null));
    void clockKnown.then((startedAt) => {
      if (!this.life.learnedClock(run)) return; // stopped meanwhile
      // after the start (on the fleet's clock as learned), not after now: a fire due while the
      // clock was being learned is claimed late, not skipped; the catch-up pass has every fire
      // up to that same moment, so no fire is both caught up and scheduled
      this.slots.scheduleAll(startedAt);
    });
    this.fleet?.start();
    this.gate.start();
  }

  /** Leader mode: `true` while this instance is the elected leader (synchronous); else false. */
  get isLeader(): boolean {
    return this.gate.isLeader;
  }

  /**
   * This instance's clock against the fleet's (the lock backend's), from the backend times of
   * claim and renewal answers: `offsetMs` = backend − local, true within `± boundMs`; `null`
   * before the first answer (fires then follow the own clock). The registry's `clock` field.
   */
  clockOffset(): ClockOffset | null {
    return this.clockWatch.offset();
  }

  /**
   * Stops the scheduler: claims stop at once; running jobs get `drainMs` to finish, then their
   * `ctx.signal` is aborted with `SchedulerStoppedError` and they get one more second to
   * settle; runs still going are then recorded `aborted` (not waited for any longer), leases are
   * released, leadership resigned (leader mode) and the timer cleared: nothing keeps the
   * process alive, no history row stays `running`. Does NOT close the lock or the store. Calling
   * it again returns the same promise. Never rejects except for an invalid `drainMs`.
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
    return this.slots.describe(this.path.activeCounts());
  }

  /**
   * Runs job `name` here now, as a manual fire: claimed on the job's lock key (its lease and
   * overlap rule apply) with an identity never equal to a scheduled fire, recorded with
   * `requestedBy` = `by` (default `'local'`); a sharded job runs it as one part of one
   * (`ctx.shard = { index: 0, count: 1 }`). Resolves how it ended; never rejects once started.
   * Throws `UNKNOWN_JOB` (not registered here), `SchedulerStoppedError` unless running.
   */
  trigger(name: string, options: { by?: string } = {}): Promise<ManualRunOutcome> {
    const job = this.slots.byName.get(name)?.def;
    if (!job) return Promise.reject(unknownJob(name));
    if (!this.life.takesClaims()) {
      return Promise.reject(new SchedulerStoppedError('trigger() needs a running scheduler'));
    }
    return this.path.manual.run(job, options.by ?? 'local');
  }

  /**
   * Pauses job `name` fleet-wide through the store: fires are still claimed, but recorded
   * `skipped` (`paused`). Rejects with `InvalidOptionError` (field `store`) without a store.
   */
  async pause(name: string, options: PauseOptions = {}): Promise<void> {
    await setJobPaused(this.options.store, name, true, options);
  }

  /** Resumes a job paused with {@link Scheduler.pause} (from any process), fleet-wide. */
  async resume(name: string, options: PauseOptions = {}): Promise<void> {
    await setJobPaused(this.options.store, name, false, options);
  }

  private async shutdown(drainMs: number): Promise<void> {
    if (this.life.state !== 'idle') {
      this.life.drain();
      this.slots.cancelAll();
      const notTaking = this.fleet?.stopRequests(); // no new run requests while draining
      const { history, queue: timers, log } = this;
      const onAborting = () => this.life.abortRuns();
      await drainFires(
        { fires: () => this.path.active(), history, timers, log, onAborting },
        drainMs,
      );
      await notTaking;
    }
    await finishStop(this.fleet, this.history, this.queue, this.gate);
    this.life.stopped();
  }
}
