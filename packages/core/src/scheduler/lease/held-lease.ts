import type { Clock } from '../../clock.js';
import type { LeaseLostError } from '../../errors.js';
import { BackendUnavailableError, toError } from '../../errors.js';
import type { ClockSample } from '../../fleet-clock/offset-estimator.js';
import type { Lease, Lock } from '../../lock.js';
import type { Logger } from '../../logger.js';
import { safeCall } from '../fire/index.js';
import type { LeaseCalls } from '../lock-calls/index.js';
import type { TimerQueue, TimerSource } from '../timing/index.js';
import { GiveUp, LeaseDeadline, settledWithin, settleWithin } from '../timing/index.js';
import { LeaseKeeper } from './lease-keeper.js';

/** What holding a lease needs. */
export interface HoldContext {
  readonly lock: Lock;
  /** Renewals and releases (batched with others due together where the lock allows). */
  readonly calls: LeaseCalls;
  readonly clock: Clock;
  readonly queue: TimerQueue;
  readonly leaseMs: number;
  readonly log: Logger;
  /** Called once, synchronously, when the lease counts as lost. */
  onLost(error: LeaseLostError): void;
  /** Called after every successful renewal. */
  onRenewed(lease: Lease): void;
  /** Receives the backend's time carried by a renewal answer. */
  sampled(sample: ClockSample): void;
}

/**
 * A won lease while this instance holds it: its local {@link LeaseDeadline}, the
 * {@link LeaseKeeper} that renews it (started by the fire), the job's `AbortController`, and
 * how it is given back at the end: released after a run, handed back when it never ran.
 */
export class HeldLease {
  readonly token: number;
  readonly deadline: LeaseDeadline;
  readonly keeper: LeaseKeeper;
  /**
   * The job's signal; aborted when the lease is lost or `stop()` aborts the run. A `GiveUp`: its
   * `AbortSignal` (an `EventTarget`) is made only when the job reads `ctx.signal`.
   */
  readonly controller = new GiveUp();
  private returned = false;

  /** @param sentAt monotonic time the winning claim was sent: the deadline counts from it. */
  constructor(
    private readonly c: HoldContext,
    lease: Lease,
    sentAt: number,
  ) {
    const { calls, clock, queue, leaseMs } = c;
    this.token = lease.token;
    this.deadline = new LeaseDeadline(clock, lease, leaseMs, sentAt, (e) => c.onLost(e));
    const deadline = this.deadline;
    this.keeper = new LeaseKeeper({
      calls,
      lease,
      leaseMs,
      sentAt,
      deadline,
      clock,
      queue,
      onRenewed: (renewed) => c.onRenewed(renewed),
      sampled: (sample) => c.sampled(sample),
    });
  }

  /**
   * Releases the lease once `outcome` (the first try of the fire's outcome write) settled,
   * waiting at most a third of the lease and never past the local deadline (the keeper is
   * stopped by then): a holder-lost sweep that finds the lease gone reads the outcome, or its
   * `lease_lost` is refused by the store (the first outcome wins). A failing store does not
   * delay the release; one that does not answer delays it by that bound only. With no outcome
   * write (`null`: no store) it releases at once. `nextFireInMs`: the job's next fire is this
   * far away and needs this lease free (an exclusive job): the wait ends half-way to it, leaving
   * the other half for the release to land, so a slow store does not turn that fire `busy`.
   * Never rejects.
   */
  async releaseAfter(
    outcome: Promise<void> | null,
    nextFireInMs: number | null = null,
  ): Promise<void> {
    if (outcome && !this.returned) {
      const bound = this.c.leaseMs / 3;
      const beforeNext = nextFireInMs === null ? bound : nextFireInMs / 2;
      const wait = Math.min(bound, this.deadline.remainingMs(), beforeNext);
      if (wait > 0) await settledWithin(outcome, wait, this.c.queue);
    }
    await this.giveBack('release');
  }

  /**
   * Stops renewing and gives the lease back, once: `release` after a run (the fire stays
   * claimed), `handBack` for a fire that never ran (withdrawn, so another instance may run it).
   * Bounded, never rejects.
   */
  async giveBack(how: 'release' | 'handBack'): Promise<void> {
    this.keeper.stop();
    if (this.returned) return;
    this.returned = true;
    const { lock, calls, queue, leaseMs, log } = this.c;
    const ctx = { lock, calls, timers: queue, boundMs: leaseMs / 3, log };
    const lease = this.keeper.lease;
    await (how === 'release' ? releaseLease(ctx, lease) : handBackClaim(ctx, lease));
  }
}

/** How a lease is given back: where, within how long, and where failures are logged. */
export interface ReturnContext {
  readonly lock: Lock;
  readonly timers: TimerSource;
  /** Bound on the lock call, ms. */
  readonly boundMs: number;
  readonly log: Logger;
  /** Where releases go (batched with others due together); default `lock.release`. */
  readonly calls?: LeaseCalls;
}

function bounded<T>(ctx: ReturnContext, operation: string, call: () => Promise<T>): Promise<T> {
  return settleWithin(
    safeCall(call),
    ctx.boundMs,
    () =>
      BackendUnavailableError.because(
        ctx.lock.backend,
        operation,
        `no answer in ${ctx.boundMs} ms`,
      ),
    ctx.timers,
  );
}

/**
 * Ends a lease after its run: the fire's claim record stays, so the fire never runs again.
 * Bounded and contained: on failure the lease simply expires. Never rejects.
 */
export async function releaseLease(ctx: ReturnContext, lease: Lease): Promise<void> {
  try {
    await bounded(ctx, 'release', () =>
      ctx.calls ? ctx.calls.release(lease) : ctx.lock.release(lease),
    );
  } catch (error) {
    ctx.log.warn('fleetcron: could not release the lease; it expires by itself', {
      error: toError(error),
      token: lease.token,
    });
  }
}

/**
 * Hands back a won claim that will never run, so another instance can still claim the fire
 * inside its window: `lock.withdraw(lease)` when the lock has it, else `release` (the fire then
 * stays claimed and does not run). Bounded and contained. Never rejects.
 */
export async function handBackClaim(ctx: ReturnContext, lease: Lease): Promise<void> {
  const { lock } = ctx;
  const withdraw = lock.withdraw;
  if (typeof withdraw !== 'function') {
    await releaseLease(ctx, lease);
    return;
  }
  try {
    await bounded(ctx, 'withdraw', () => withdraw.call(lock, lease));
  } catch (error) {
    ctx.log.warn('fleetcron: could not hand back an unrun claim; its lease expires by itself', {
      error: toError(error),
      token: lease.token,
    });
  }
}
