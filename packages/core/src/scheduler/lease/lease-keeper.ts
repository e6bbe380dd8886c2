import type { Clock } from '../../clock.js';
import type { ClockSample } from '../../fleet-clock/offset-estimator.js';
import type { Lease } from '../../lock.js';
import { safeCall } from '../fire/index.js';
import type { LeaseCalls } from '../lock-calls/index.js';
import type { LeaseDeadline, QueueEntry, TimerQueue } from '../timing/index.js';

/** Options of {@link LeaseKeeper}. */
export interface LeaseKeeperOptions {
  /** Where renewals go: `lock.extend`, or batched with other renewals due together. */
  calls: LeaseCalls;
  lease: Lease;
  leaseMs: number;
  /** Monotonic time at which the claim request that won the lease was SENT. */
  sentAt: number;
  /** The lease's local deadline; the keeper moves it on each renewal and loses it when due. */
  deadline: LeaseDeadline;
  clock: Clock;
  queue: TimerQueue;
  /** Called after every successful renewal. */
  onRenewed: (lease: Lease) => void;
  /** Receives the backend's time carried by a renewal answer (`Lease.backendTime`). */
  sampled: (sample: ClockSample) => void;
}

/**
 * Renews a won lease every third of it, through the scheduler's single timer queue, and keeps
 * its {@link LeaseDeadline}: each successful renewal moves the deadline to its send time + lease
 * − margin; `extend` answering `null` (not ours any more) loses the lease at once; when no
 * renewal succeeded by the deadline (extend threw or hangs) a timer loses it. After each renewal
 * answer the deadline is checked synchronously, since after a freeze the answer may arrive
 * before the overdue deadline timer runs.
 */
export class LeaseKeeper {
  /** The newest lease (with the latest `expiresAt`). */
  lease: Lease;
  private stopped = false;
  private inFlight = false;
  private renewEntry: QueueEntry | null = null;
  private deadlineEntry: QueueEntry | null = null;

  constructor(private readonly options: LeaseKeeperOptions) {
    this.lease = options.lease;
  }

  /**
   * Starts renewing. The deadline timer is armed with the first renewal: the deadline lies past
   * the renewal's time, whose callback (run first, even after a freeze) checks it
   * synchronously, so a timer of its own is needed only once a renewal is in flight. Most runs
   * end before their first renewal: one timer entry per run instead of two.
   */
  start(): void {
    const { clock, leaseMs, sentAt } = this.options;
    this.scheduleRenew(sentAt + leaseMs / 3 - clock.monotonic());
  }

  /** Stops renewing (the run ended or the lease was lost); does not release the lease. */
  stop(): void {
    this.stopped = true;
    const { queue } = this.options;
    if (this.renewEntry) queue.cancel(this.renewEntry);
    if (this.deadlineEntry) queue.cancel(this.deadlineEntry);
    this.renewEntry = null;
    this.deadlineEntry = null;
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
    const { queue, deadline, clock } = this.options;
    if (this.deadlineEntry) queue.cancel(this.deadlineEntry);
    this.deadlineEntry = queue.after(deadline.monotonicAt - clock.monotonic(), () => {
      this.deadlineEntry = null;
      if (!this.stopped && deadline.passed()) this.stop();
    });
  }

  private renew(): void {
    const { calls, clock, leaseMs, deadline } = this.options;
    if (this.stopped || this.inFlight) return;
    if (deadline.passed()) {
      this.stop();
      return;
    }
    if (!this.deadlineEntry) this.armDeadline(); // a renewal that hangs must not hold the lease
    const sentAt = clock.monotonic();
    this.inFlight = true;
    safeCall(() => calls.extend(this.lease, leaseMs)).then(
      (renewed) => this.answered(renewed, sentAt),
      (error: unknown) => this.failed(error),
    );
  }

  /** The renewal sent at `sentAt` was answered. */
  private answered(renewed: Lease | null, sentAt: number): void {
    const { clock, leaseMs, deadline } = this.options;
    this.inFlight = false;
    if (typeof renewed?.backendTime === 'number') {
      const receivedMono = clock.monotonic();
      this.options.sampled({ sentMono: sentAt, receivedMono, backendTime: renewed.backendTime });
    }
    if (this.stopped) return;
    if (renewed === null) {
      deadline.lose(null); // not ours any more
    } else {
      deadline.renewed(sentAt);
    }
    // the answer may come after a freeze, before the overdue deadline timer: check now
    if (deadline.passed()) {
      this.stop();
      return;
    }
    this.lease = renewed as Lease;
    this.armDeadline();
    this.scheduleRenew(sentAt + leaseMs / 3 - clock.monotonic());
    this.options.onRenewed(this.lease);
  }

  private failed(error: unknown): void {
    const { deadline, leaseMs } = this.options;
    this.inFlight = false;
    if (this.stopped) return;
    deadline.renewalFailed(error);
    if (deadline.passed()) {
      this.stop();
      return;
    }
    // retry soon; the deadline still decides when the lease counts as lost
    this.scheduleRenew(leaseMs / 6);
  }
}
