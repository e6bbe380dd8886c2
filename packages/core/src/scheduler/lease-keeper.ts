import type { Clock } from '../clock.js';
import { LeaseLostError } from '../errors.js';
import type { Lease, Lock } from '../lock.js';
import type { QueueEntry, TimerQueue } from './timer-queue.js';

/**
 * Safety margin before the local deadline, in ms: the job's signal is aborted this long before
 * the earliest moment the backend can consider the lease expired, so timer lateness and clock
 * rate differences do not let a new holder start first. A tenth of the lease, at most 1 s.
 */
export function abortMarginMs(leaseMs: number): number {
  return Math.min(1_000, Math.floor(leaseMs / 10));
}

/** Options of {@link LeaseKeeper}. */
export interface LeaseKeeperOptions {
  lock: Lock;
  lease: Lease;
  leaseMs: number;
  /** Monotonic time at which the claim request that won the lease was SENT. */
  sentAt: number;
  clock: Clock;
  queue: TimerQueue;
  /** Called after every successful renewal. */
  onRenewed: (lease: Lease) => void;
  /** Called once when the lease is lost; the caller aborts the job's signal with `error`. */
  onLost: (error: LeaseLostError) => void;
}

/**
 * Renews a won lease while its job runs, every third of the lease, through the scheduler's
 * single timer queue.
 *
 * Abort rule (Guarantee 4): the keeper keeps a local deadline = the monotonic time at which the
 * last successful claim or extend request was SENT + `leaseMs` − {@link abortMarginMs}. The
 * backend received that request after it was sent, so its expiry is at least that late. If no
 * renewal succeeded by the deadline (extend threw, hangs, or the timer is late) the lease is lost;
 * `extend` answering `null` (not ours any more) loses it at once.
 */
export class LeaseKeeper {
  /** The newest lease (with the latest `expiresAt`). */
  lease: Lease;
  /** Local monotonic deadline; see the class comment. */
  deadline: number;
  private lost = false;
  private stopped = false;
  private inFlight = false;
  private lastError: unknown = null;
  private renewEntry: QueueEntry | null = null;
  private deadlineEntry: QueueEntry | null = null;

  constructor(private readonly options: LeaseKeeperOptions) {
    this.lease = options.lease;
    this.deadline = options.sentAt + options.leaseMs - abortMarginMs(options.leaseMs);
  }

  /** Whether the lease was lost. */
  get isLost(): boolean {
    return this.lost;
  }

  /** Starts renewing; loses the lease at once if the claim itself took past the deadline. */
  start(): void {
    const { clock, leaseMs } = this.options;
    const remaining = this.deadline - clock.monotonic();
    if (remaining <= 0) {
      this.lose(null);
      return;
    }
    this.armDeadline();
    this.scheduleRenew(this.options.sentAt + leaseMs / 3 - clock.monotonic());
  }

  /** Stops renewing (the run ended); does not release the lease. */
  stop(): void {
    this.stopped = true;
    this.cancelEntries();
  }

  private scheduleRenew(inMs: number): void {
    const { queue } = this.options;
    if (this.renewEntry) queue.cancel(this.renewEntry);
    this.renewEntry = queue.after(Math.max(0, inMs), () => {
      this.renewEntry = null;
      this.renew();
    });
  }

  private armDeadline(): void {
    const { queue, clock } = this.options;
    if (this.deadlineEntry) queue.cancel(this.deadlineEntry);
    this.deadlineEntry = queue.after(this.deadline - clock.monotonic(), () => {
      this.deadlineEntry = null;
      if (!this.stopped && !this.lost) this.lose(this.lastError);
    });
  }

  private renew(): void {
    if (this.stopped || this.lost || this.inFlight) return;
    const { lock, clock, leaseMs } = this.options;
    const sentAt = clock.monotonic();
    this.inFlight = true;
    let pending: Promise<Lease | null>;
    try {
      pending = Promise.resolve(lock.extend(this.lease, leaseMs));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (renewed) => {
        this.inFlight = false;
        if (this.stopped || this.lost) return;
        if (renewed === null) {
          this.lose(null);
          return;
        }
        this.lease = renewed;
        this.lastError = null;
        this.deadline = Math.max(this.deadline, sentAt + leaseMs - abortMarginMs(leaseMs));
        this.armDeadline();
        this.scheduleRenew(sentAt + leaseMs / 3 - clock.monotonic());
        this.options.onRenewed(renewed);
      },
      (error: unknown) => {
        this.inFlight = false;
        if (this.stopped || this.lost) return;
        this.lastError = error;
        // retry soon; the deadline still decides when the lease counts as lost
        this.scheduleRenew(leaseMs / 6);
      },
    );
  }

  private lose(cause: unknown): void {
    if (this.lost) return;
    this.lost = true;
    this.cancelEntries();
    const { lease } = this;
    this.options.onLost(new LeaseLostError(lease.key, lease.fireAt, cause ?? undefined));
  }

  private cancelEntries(): void {
    const { queue } = this.options;
    if (this.renewEntry) queue.cancel(this.renewEntry);
    if (this.deadlineEntry) queue.cancel(this.deadlineEntry);
    this.renewEntry = null;
    this.deadlineEntry = null;
  }
}
