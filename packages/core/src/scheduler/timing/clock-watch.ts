import type { Clock } from '../../clock.js';
import { fleetClock } from '../../fleet-clock/fleet-clock.js';
import {
  type ClockOffset,
  ClockOffsetEstimator,
  type ClockSample,
} from '../../fleet-clock/offset-estimator.js';
import type { Logger } from '../../logger.js';
import { safePublish } from '../fire/index.js';
import type { TimerQueue } from './timer-queue.js';

/**
 * How far the corrected clock may move before the timer queue re-keys its wall-clock entries.
 * Smaller changes of the estimate are absorbed (a fire may start this much off its time).
 */
export const REKEY_TOLERANCE_MS = 2;

/** How many recent send times {@link ClockWatch.sample} remembers (batches in flight at once). */
const RECENT_SENDS = 8;

/** Default `clockSkewWarnMs`: a warning when the offset from the backend's clock exceeds it. */
export const DEFAULT_CLOCK_SKEW_WARN_MS = 1_000;

/** Where a sample came from, for the `clock.offset` event. */
export interface SampleSource {
  readonly instanceId: string;
  readonly job: string;
  readonly fireAt: number;
  readonly backend: string;
}

/**
 * The scheduler's view of the fleet's clock: the offset estimator fed by the backend times of
 * claim and renewal answers, and {@link ClockWatch.clock}, the corrected clock every wall time of
 * the scheduler is read from. When the estimate changes it re-keys the timer queue, publishes
 * `clock.offset`, and logs a warning when the offset crosses `warnMs` (once per crossing).
 */
export class ClockWatch {
  /** The fleet's clock: the backend's time as estimated; the local clock with no sample. */
  readonly clock: Clock;
  private readonly estimator: ClockOffsetEstimator;
  private queue: TimerQueue | null = null;
  private warned = false;
  /** Send and receive times of the last samples taken, a ring (see {@link sample}). */
  private readonly recentSent = new Float64Array(RECENT_SENDS).fill(Number.NaN);
  private readonly recentReceived = new Float64Array(RECENT_SENDS);
  private next = 0;

  constructor(
    local: Clock,
    private readonly warnMs: number,
    private readonly log: Logger,
  ) {
    this.estimator = new ClockOffsetEstimator(local);
    this.clock = fleetClock(local, this.estimator);
  }

  /** The queue to re-key when the estimate moves (it reads {@link clock}, so comes after it). */
  attach(queue: TimerQueue): void {
    this.queue = queue;
  }

  /** The current estimate, or `null` before the first answer that carried the backend's time. */
  offset(): ClockOffset | null {
    return this.estimator.estimate();
  }

  /**
   * Takes one sample (`source` is read only when the estimate changed); never throws. A sample
   * sent at the same moment as one of the last {@link RECENT_SENDS} taken and answered later
   * says nothing new (the answers of one batch, whose callbacks may interleave with another
   * batch's): its round trip is longer, so it never becomes the estimate; it is dropped before
   * the estimator sees it.
   */
  sample(sample: ClockSample, source: () => SampleSource): void {
    const i = this.recentSent.indexOf(sample.sentMono);
    if (i >= 0 && sample.receivedMono > (this.recentReceived[i] as number)) return;
    this.recentSent[this.next] = sample.sentMono;
    this.recentReceived[this.next] = sample.receivedMono;
    this.next = (this.next + 1) % RECENT_SENDS;
    if (!this.estimator.record(sample)) return;
    const estimate = this.estimator.estimate();
    if (!estimate) return;
    this.queue?.wallMoved(REKEY_TOLERANCE_MS);
    const { offsetMs, rttMs, boundMs } = estimate;
    const { instanceId, job, fireAt, backend } = source();
    safePublish({
      instanceId,
      job,
      fireAt,
      at: this.clock.now(),
      type: 'clock.offset',
      backend,
      offsetMs,
      rttMs,
      boundMs,
    });
    const skewed = Math.abs(offsetMs) > this.warnMs;
    if (skewed && !this.warned) {
      this.log.warn(
        "fleetcron: this instance's clock is off the backend's clock; fires follow the backend's clock",
        { offsetMs, rttMs, boundMs, thresholdMs: this.warnMs },
      );
    }
    this.warned = skewed;
  }
}
