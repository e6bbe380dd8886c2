import { type LeaseLostError, toError } from '../../errors.js';
import type { ClockSample } from '../../fleet-clock/offset-estimator.js';
import type { Lease } from '../../lock.js';
import type { Logger } from '../../logger.js';
import type { RunRequestRef } from '../../middleware.js';
import type { NormalizedJob } from '../job/index.js';
import { HeldLease } from '../lease/index.js';
import type { LeaseDeadline } from '../timing/index.js';
import { GiveUp, settleWithin } from '../timing/index.js';
import { claimFire } from './claim.js';
import { claimAfterEarly, onTimeContext } from './early-claims.js';
import { FireEvents, type SkipReason } from './fire-events.js';
import { type FireHistory, historyOfFire } from './fire-history.js';
import type { FireDeps, FireKind, FireOutcome, FireState } from './fire-types.js';
import { type RunVerdict, runChain, verdictOf } from './run-chain.js';
import { fireLogger, isSilentLogger, safeCall, safeLogger } from './safe.js';

/** The outcome of a fire not (yet) claimed here; outcomes are read-only, so one is shared. */
const NOT_CLAIMED: FireOutcome = { status: 'lost', reason: null };
const DROPPED: FireOutcome = { status: 'dropped', reason: null };
const UNDECIDED: FireOutcome = { status: 'undecided', reason: null };
const NOTHING_TO_MARK = (_outcome: FireOutcome): void => {};

/**
 * One fire on this instance, a state machine (see {@link FireState}): claim → hold the lease
 * (keeper started) → paused check and `running` row → run the middleware chain → record the
 * outcome → release, each step with its failure exit (lost, busy, backend failure, lease
 * expired, stopping, paused). It owns its state and returns its outcome: {@link done} resolves
 * with it, and whoever launched the fire reads it there. The lease's local deadline is checked
 * synchronously after every await and when the job settles ({@link LeaseDeadline.passed}).
 * Nothing in here rejects: lock, store, job and listener failures are contained and reported.
 */
export class FireRun {
  /**
   * Resolves with the fire's outcome once it is completely handled (history written, then the
   * lease given back): state `released`.
   */
  readonly done: Promise<FireOutcome>;
  /** How it ended here: `lost`/`dropped` until a status is recorded. */
  outcome: FireOutcome = NOT_CLAIMED;
  /** Where the fire is now. */
  state: FireState = 'claiming';
  /** This fire's events. */
  readonly events: FireEvents;
  /** This fire's history, built at its first use (most fires of a fleet are lost: no row). */
  private historyOfThisFire: FireHistory | null = null;
  /** This fire's logger (job, fire time, instance attached). */
  readonly log: Logger;
  private holding: HeldLease | null = null;
  /** The member of this fire's catch-up series being handled now (see `FireKind.series`). */
  private member: FireRun | null = null;
  private running = false;
  private attempt = 1;
  private startedMono = 0;
  private stopReason: Error | null = null;
  private closed = false;
  /** Aborted when `stop()` stops waiting for this fire (a claim in flight is given up). */
  private readonly stopping = new GiveUp();
  private markDone: (outcome: FireOutcome) => void = NOTHING_TO_MARK;

  constructor(
    private readonly deps: FireDeps,
    readonly job: NormalizedJob,
    readonly fireAt: number,
    readonly kind: FireKind = {},
  ) {
    const { instanceId, clock } = deps;
    this.log = fireLogger(deps.logger, job.name, fireAt, instanceId);
    this.events = new FireEvents(instanceId, job.name, fireAt, clock, kind.shard);
    this.done = new Promise((resolve) => {
      this.markDone = resolve;
    });
    void this.execute();
  }

  /** This fire's history row (at most one), written in order. */
  private get history(): FireHistory {
    this.historyOfThisFire ??= historyOfFire(this.deps.history, this, this.deps.instanceId);
    return this.historyOfThisFire;
  }

  /** Once every write of this fire was answered or given up on; `null`: nothing written. */
  private flushed(): Promise<void> | null {
    return this.historyOfThisFire?.flushed() ?? null;
  }

  /** `stop()` passed its drain deadline: aborts the run's signal; the run is recorded `aborted`. */
  abort(reason: Error): void {
    this.stopReason = reason;
    this.stopping.abort(reason);
    this.member?.abort(reason);
    this.holding?.controller.abort(reason);
  }

  /**
   * `stop()` stops waiting: a run still going (ignoring its aborted signal) is recorded
   * `aborted` now, the lease is given back, and the fire counts as done. Never rejects.
   */
  async forceFinish(): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    await this.member?.forceFinish();
    if (this.running) {
      this.finish(verdictOf(null, this.holding?.deadline.error ?? null, this.stopReason));
      // a series member's lease is its decision fire's, given back by that fire
      if (!this.kind.inherit) await this.holding?.releaseAfter(this.history.triedOnce());
    } else if (this.holding) {
      await this.handBack('stopping');
    }
    await this.flushed();
    this.released();
  }

  /** The last step: the fire is handled; `done` resolves with its outcome. */
  private released(): void {
    this.state = 'released';
    this.markDone(this.outcome);
  }

  private async execute(): Promise<void> {
    try {
      await this.steps();
    } catch (error) {
      this.log.error('fleetcron: unexpected error while handling a fire', {
        error: toError(error),
      });
    } finally {
      // a fire not won here (most fires of a fleet) has no lease to give back: no await for it;
      // a series member's lease is its decision fire's, given back by that fire
      if (this.holding && !this.kind.inherit) {
        // the next fire bounds the wait for the outcome: computed only when there is one
        const outcome = this.history.triedOnce();
        await this.holding.releaseAfter(outcome, outcome ? this.nextFireInMs() : null);
      }
      // a series member recorded `missed` does not hold up the next member (and the lease) for
      // its row: the history writer keeps the rows in order, and stop() waits for them
      const flushed = this.kind.inherit && this.kind.missed ? null : this.flushed();
      if (flushed) await flushed;
      this.released();
    }
  }

  private async steps(): Promise<void> {
    if (this.kind.inherit) return this.handleUnder(this.kind.inherit);
    const context = onTimeContext(this.deps, this, this.stopping, (sample) => this.sampled(sample));
    const first = await claimFire(context, this.job, this.fireAt); // 1. claim
    // a catch-up claim refused `early` was planned on a clock that runs ahead: not retried at
    // the fire time (the fire is not missed); its planner plans again on the corrected clock
    const waits = first.status === 'early' && !this.kind.catchUp;
    const claim = waits ? await claimAfterEarly(context, this.job, this.fireAt) : first;
    this.kind.onClaimed?.(claim.status);
    if (claim.status === 'failed') return this.skip('backend_unavailable', null, claim.error);
    if (claim.status === 'busy') {
      // a run request answered busy is decided as this skip, by one take only
      if (await this.decidesRequest(null)) return this.skip('overlap', null, null);
      this.outcome = UNDECIDED;
      return;
    }
    if (claim.status !== 'won') {
      this.outcome = claim.status === 'dropped' ? DROPPED : NOT_CLAIMED;
      return;
    }
    const held = this.hold(claim.lease, claim.sentAt);
    this.state = 'held';
    if (held.deadline.passed()) return this.handBack('lease_expired');
    if (this.refusesRuns()) return this.handBack('stopping');
    held.keeper.start(); // 2. start the keeper
    // 2a. a run request: decided by this fire before anything runs or is recorded, or not here
    if (!(await this.decidesRequest(held))) return this.handBackUndecided(held);
    if (held.deadline.passed()) return this.handBack('lease_expired');
    // 2b. a catch-up decision: the older missed fires first, one at a time, under this lease;
    // each member records itself (`skipped` when the lease expired or stop() began)
    const { series, onClaimed, ...kind } = this.kind;
    const member: FireKind = { ...kind, inherit: held };
    for (const fireAt of series ?? []) {
      this.member = new FireRun(this.deps, this.job, fireAt, member);
      await this.member.done;
      this.member = null;
    }
    return this.handleUnder(held);
  }

  /**
   * Runs (or, under `catchUp: 'skip'`, records missed) this fire under `held`: the lease this
   * fire won, or its catch-up decision fire's lease for a member of a series.
   */
  private async handleUnder(held: HeldLease): Promise<void> {
    this.holding = held;
    this.state = 'held';
    if (held.deadline.passed()) return this.handBack('lease_expired');
    if (this.refusesRuns()) return this.handBack('stopping');
    if (this.kind.missed) return this.recordMissed(held.token); // catchUp 'skip': record only
    const { store, pauseChecks } = this.deps;
    const startedAt = this.deps.clock.now();
    // with no store there is nothing to read or write: the job starts in this same stretch. With
    // one, the paused read and the `running` row go out together, each bounded by a third of
    // the lease: one store round trip before the run instead of two in turn (under a burst the
    // second one made runs start late enough to meet their next fire, issue #25). A paused
    // fire's `running` row then becomes its `skipped`/`paused` row (the same id); if the
    // instance dies in between, holder-lost recovery finds that row, and a rerun reads the
    // paused flag again.
    const written = store ? this.history.started(held.token, startedAt) : null;
    if (store) {
      const paused = await pauseChecks.isPaused(this.job.name, this.job.leaseMs / 3, (e) => {
        this.events.storeFailed(e);
        this.log.warn('fleetcron: could not read the job state; running anyway', { error: e });
      });
      if (held.deadline.passed()) return this.handBack('lease_expired');
      if (paused) return this.skip('paused', held.token, null);
    }
    if (written) await written;
    if (held.deadline.passed()) return this.handBack('lease_expired');
    if (this.refusesRuns()) return this.handBack('stopping');
    const error = await this.runJob(held, startedAt); // 3. run the chain
    const lost = held.deadline.passed() ? held.deadline.error : null;
    this.finish(verdictOf(error, lost, this.stopReason)); // 4. finish
  }

  /**
   * How far away the job's next fire is, ms, when it needs this fire's lease free (an exclusive
   * job, `overlap: 'skip'`: its fires share one lease); `null` otherwise, or when the trigger has
   * no next fire or throws (the fire path reports trigger errors where it plans fires).
   */
  private nextFireInMs(): number | null {
    if (this.job.overlap !== 'skip') return null;
    try {
      const next = this.job.trigger.next(new Date(this.fireAt));
      return next ? next.getTime() - this.deps.clock.now() : null;
    } catch {
      return null;
    }
  }

  /** `stop()` gave up draining, stopped waiting, or {@link abort} (a lost term): not run. */
  private refusesRuns(): boolean {
    if (this.closed || this.stopReason !== null || !this.deps.life.runsFires()) return true;
    // a catch-up series starts no run once stop() began: its fires are recorded `stopping`
    const series = this.kind.inherit !== undefined || this.kind.series !== undefined;
    return series && this.deps.life.stopSignal.aborted;
  }

  /** Hands a backend time carried by this fire's claim or renewal answer to the fleet clock. */
  private sampled(sample: ClockSample): void {
    this.deps.clockWatch.sample(sample, () => ({
      instanceId: this.deps.instanceId,
      job: this.job.name,
      fireAt: this.fireAt,
      backend: this.deps.lock.backend,
    }));
  }

  /**
   * Whether this fire may go on as the manual fire of its run request: `true` without one, or
   * with a store that removes requests when taken; otherwise the store's decision
   * (`decideRunRequest` for this take), asked again once after a failure, both within a third of
   * the job's lease (as the other store steps before a run). A refusal (another take holds the
   * request) or no answer is `false`: the fire neither runs nor records, and the request is left
   * to its current take, or to a new one after this take's lease.
   */
  private async decidesRequest(held: HeldLease | null): Promise<boolean> {
    const decide = this.kind.request?.decide;
    if (!decide) return true;
    const { queue, clock } = this.deps;
    const giveUpAt = clock.monotonic() + this.job.leaseMs / 3;
    for (let attempt = 1; ; attempt++) {
      const left = giveUpAt - clock.monotonic();
      try {
        const noAnswer = () =>
          new Error(`decideRunRequest: no answer within ${Math.round(left)} ms`);
        const decided = await settleWithin(
          safeCall(() => decide(this.fireAt)),
          left,
          noAnswer,
          queue,
        );
        if (!decided) {
          this.log.info(
            'fleetcron: a run request taken here is held by another take; not run here',
            {
              request: this.kind.request?.id,
            },
          );
        }
        return decided;
      } catch (error) {
        const failure = toError(error);
        this.events.storeFailed(failure);
        if (attempt >= 2 || giveUpAt - clock.monotonic() <= 0 || held?.deadline.passed()) {
          this.log.warn(
            "fleetcron: could not decide a run request; not run here (another instance takes it after this take's lease)",
            { request: this.kind.request?.id, error: failure },
          );
          return false;
        }
      }
    }
  }

  /** A won claim whose run request went to another take: given back unrecorded, not run. */
  private async handBackUndecided(held: HeldLease): Promise<void> {
    this.outcome = UNDECIDED;
    held.keeper.stop();
    await held.giveBack('handBack');
  }

  /** Sets the local deadline of a won lease and prepares its keeper (not started yet). */
  private hold(lease: Lease, sentAt: number): HeldLease {
    const { lock, clock, queue, leaseCalls: calls } = this.deps;
    this.holding = new HeldLease(
      {
        lock,
        calls,
        clock,
        queue,
        leaseMs: this.job.leaseMs,
        log: this.log,
        onLost: (error) => this.leaseLost(error),
        sampled: (sample) => this.sampled(sample),
        onRenewed: (renewed) => this.events.leaseRenewed(renewed.token, renewed.expiresAt),
      },
      lease,
      sentAt,
    );
    return this.holding;
  }

  /** The deadline passed (or the backend said the lease is gone): abort, and record at once. */
  private leaseLost(error: LeaseLostError): void {
    const held = this.holding;
    if (!held) return;
    this.member?.leaseLost(error); // a member of this fire's series runs under this lease
    held.keeper.stop();
    this.events.leaseLost(held.token, toError(error.cause ?? error));
    this.log.warn('fleetcron: lease lost, aborting the run', { token: held.token });
    held.controller.abort(error);
    // a run that ignores its signal must not stay `running`: its row ends now
    if (this.running) this.finish(verdictOf(null, error, this.stopReason));
  }

  private async runJob(held: HeldLease, startedAt: number): Promise<Error | null> {
    const { clock, instanceId, middleware } = this.deps;
    this.events.runStarted(held.token, startedAt);
    this.startedMono = clock.monotonic();
    this.running = true;
    this.state = 'running';
    try {
      return await runChain({
        job: this.job,
        middleware,
        fireAt: this.fireAt,
        startedAt,
        instanceId,
        clock,
        lease: held.deadline.view(held.token),
        requestedBy: this.kind.requestedBy ?? null,
        recovery: this.kind.recovery ?? false,
        shard: this.kind.shard ?? null,
        request: this.requestRef(),
        controller: held.controller,
        log: isSilentLogger(this.log) ? this.log : safeLogger(this.log, { token: held.token }),
        onAttempt: (attempt) => {
          this.attempt = attempt;
        },
      });
    } finally {
      this.running = false;
    }
  }

  /** `ctx.request`: the run request this fire answers, without its decision. */
  private requestRef(): RunRequestRef | null {
    const request = this.kind.request;
    return request ? { id: request.id, by: request.by, data: request.data } : null;
  }

  /** Records the run's terminal status once; later calls (the job settling late) are ignored. */
  private finish({ status, error }: RunVerdict): void {
    const held = this.holding;
    const { clock } = this.deps;
    if (!held || !this.history.finished(status, this.attempt, error, clock.now())) return;
    this.outcome = { status, reason: null };
    this.state = 'recorded';
    if (!this.kind.inherit) held.keeper.stop(); // a series member: the lease renews on
    if (error && status !== 'lease_lost') this.log.warn('fleetcron: run failed', { status, error });
    const { token } = held;
    const durationMs = clock.monotonic() - this.startedMono;
    this.events.runFinished({ token, status, attempt: this.attempt, durationMs, error });
  }

  /** A missed fire claimed under `catchUp: 'skip'`: `fire.missed`, recorded `skipped`/`missed`. */
  private recordMissed(token: number): void {
    this.events.missed(this.deps.clock.now() - this.fireAt);
    this.skip('missed', token, null);
  }

  private skip(reason: SkipReason, token: number | null, error: Error | null): void {
    if (this.history.skipped(reason, token, error, this.deps.clock.now())) {
      this.outcome = { status: 'skipped', reason };
      this.state = 'recorded';
      this.events.skipped(reason);
    }
  }

  /** The fire will not run: record why and hand the claim back so another instance can run it. */
  private async handBack(reason: 'lease_expired' | 'stopping'): Promise<void> {
    this.skip(reason, this.holding?.token ?? null, null);
    if (this.kind.inherit) return; // a series member: its decision fire gives the lease back
    this.holding?.keeper.stop();
    await this.holding?.giveBack('handBack');
  }
}
