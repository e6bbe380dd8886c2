import { type Clock, realClock } from '../../clock.js';
import { LeaseLostError } from '../../errors.js';
import type { JobLease } from '../../middleware.js';
import type { TimerSource } from './timer-source.js';

/**
 * Settles like `promise`, or rejects with `onTimeout()` once `ms` milliseconds pass first. The
 * timer is cleared as soon as `promise` settles, so nothing is kept alive. A call into a lock or
 * store that hangs must never hold a fire (or `stop()`) forever: wrap it in this.
 *
 * The operation itself is not cancelled. When it could still take effect after the caller gave
 * up (a claim sitting in a client's offline queue), abort its `AbortSignal` inside `onTimeout`.
 *
 * @param timers where the timer is set; default the real clock.
 * @example
 * const result = await settleWithin(
 *   client.claim(request),
 *   2_000,
 *   () => BackendUnavailableError.because('redis', 'claim', 'no answer in 2000 ms'),
 * );
 */
export function settleWithin<T>(
  promise: PromiseLike<T>,
  ms: number,
  onTimeout: () => Error,
  timers: TimerSource = realClock,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const handle = timers.setTimer(() => {
      try {
        reject(onTimeout());
      } catch (error) {
        reject(error);
      }
    }, ms);
    Promise.resolve(promise).then(
      (value) => {
        timers.clearTimer(handle);
        resolve(value);
      },
      (error: unknown) => {
        timers.clearTimer(handle);
        reject(error);
      },
    );
  });
}

/** Waits for `promise` at most `ms`; resolves `true` when it settled (either way) in time. */
export function settledWithin(
  promise: PromiseLike<unknown>,
  ms: number,
  timers: TimerSource = realClock,
): Promise<boolean> {
  const settled = Promise.resolve(promise).then(
    () => true,
    () => true,
  );
  return settleWithin(settled, ms, () => new Error('not settled in time'), timers).catch(
    () => false,
  );
}

/**
 * Safety margin before the local deadline, in ms: the job's signal is aborted this long before
 * the earliest moment the backend can consider the lease expired, so timer lateness and clock
 * rate differences do not let a new holder start first. A tenth of the lease, at most 1 s.
 */
export function abortMarginMs(leaseMs: number): number {
  return Math.min(1_000, Math.floor(leaseMs / 10));
}

/**
 * The local deadline of a held lease, on the MONOTONIC clock: the time the winning claim (or the
 * latest successful renewal) was SENT + `leaseMs` − {@link abortMarginMs}. The backend received
 * that request after it was sent, so its own expiry is later.
 *
 * {@link LeaseDeadline.passed} is the synchronous check the scheduler makes before the job
 * starts, after every await on the fire's path and when the job settles. It reads the clock
 * itself instead of trusting a timer: after a freeze (GC pause, SIGSTOP, a blocked event loop)
 * other callbacks run before the overdue timer does.
 */
export class LeaseDeadline {
  private at: number;
  private lost: LeaseLostError | null = null;
  private lastFailure: unknown = null;

  /**
   * @param sentAt monotonic time at which the claim that won the lease was sent.
   * @param onLost called once, synchronously, when the lease counts as lost (aborts the signal).
   */
  constructor(
    private readonly clock: Clock,
    private readonly fire: { key: string; fireAt: number },
    private readonly leaseMs: number,
    sentAt: number,
    private readonly onLost: (error: LeaseLostError) => void,
  ) {
    this.at = sentAt + leaseMs - abortMarginMs(leaseMs);
  }

  /** Monotonic time of the deadline. */
  get monotonicAt(): number {
    return this.at;
  }

  /** Why the lease was lost, once it was; else `null`. */
  get error(): LeaseLostError | null {
    return this.lost;
  }

  /** A renewal sent at monotonic `sentAt` succeeded: the deadline moves there (never back). */
  renewed(sentAt: number): void {
    if (this.lost) return;
    this.at = Math.max(this.at, sentAt + this.leaseMs - abortMarginMs(this.leaseMs));
    this.lastFailure = null;
  }

  /** A renewal failed; kept as the cause should the deadline pass before the next one works. */
  renewalFailed(error: unknown): void {
    this.lastFailure = error;
  }

  /** Milliseconds left before the deadline (0 once lost). Synchronous. */
  remainingMs(): number {
    if (this.lost) return 0;
    return Math.max(0, this.at - this.clock.monotonic());
  }

  /**
   * THE check: `true` once the lease cannot be relied on (the monotonic clock reached the
   * deadline, or {@link LeaseDeadline.lose} was called). The first time, it calls `onLost`
   * synchronously, so the job's signal is aborted before the caller does anything else.
   */
  passed(): boolean {
    if (this.lost) return true;
    if (this.clock.monotonic() < this.at) return false;
    this.lose(this.lastFailure);
    return true;
  }

  /** Marks the lease lost now (the backend said it is not ours, or the deadline timer fired). */
  lose(cause: unknown): void {
    if (this.lost) return;
    this.lost = new LeaseLostError(this.fire.key, this.fire.fireAt, cause ?? undefined);
    this.onLost(this.lost);
  }

  /** The job's view of this lease: `ctx.lease`. */
  view(token: number): JobLease {
    return {
      token,
      remainingMs: () => this.remainingMs(),
      assertValid: () => {
        if (this.passed()) throw this.lost;
      },
    };
  }
}
