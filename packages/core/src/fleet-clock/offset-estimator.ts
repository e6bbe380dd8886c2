import type { Clock } from '../clock.js';

/**
 * One answer of the backend that carried its time: when the request left and its answer came
 * back on this instance's MONOTONIC clock, and the backend's clock when it executed it.
 */
export interface ClockSample {
  /** `clock.monotonic()` just before the request was sent. */
  sentMono: number;
  /** `clock.monotonic()` when the answer arrived. */
  receivedMono: number;
  /** The backend's clock when it executed the request, epoch ms. */
  backendTime: number;
}

/** The current estimate of how far the backend's clock is from this instance's wall clock. */
export interface ClockOffset {
  /** Backend clock minus this instance's wall clock, ms (positive: the backend is ahead). */
  offsetMs: number;
  /** Round trip of the sample the estimate rests on, ms. */
  rttMs: number;
  /**
   * The true offset is within `offsetMs ± boundMs`: half the sample's round trip, plus half
   * the backend time's resolution, plus the drift allowance for the sample's age.
   */
  boundMs: number;
  /** Samples currently kept. */
  samples: number;
}

/** Options of {@link ClockOffsetEstimator}. */
export interface OffsetEstimatorOptions {
  /** How many recent samples are kept; the estimate uses the one with the smallest bound. Default 8. */
  maxSamples?: number;
  /**
   * Resolution of the backend's time, ms: backend times are taken as floored to it (1 for a
   * floored millisecond; 1000 for a whole-second `Date` header), so half of it is added to the
   * sample's time and to its bound. Default 1.
   */
  resolutionMs?: number;
}

/** Drift allowed between the local monotonic clock and the backend's, per ms of age (NTP's 15 ppm). */
export const DRIFT_PER_MS = 15e-6;

interface KeptSample {
  /** Backend time minus local monotonic time at the sample's midpoint. */
  monoOffset: number;
  rtt: number;
  /** Monotonic time of the answer (for the age allowance). */
  at: number;
}

/**
 * Estimates the offset of the backend's clock from this instance's clock, like NTP's
 * offset/delay filter: each sample says `backendTime − (sent + rtt/2)` with an error of at most
 * `rtt/2` (whatever the asymmetry of the two legs), so of the last `maxSamples` the one with the
 * smallest bound (round trip plus an age allowance) is used.
 *
 * Samples are kept against the local MONOTONIC clock, so a step of the local wall clock (NTP
 * step, suspend) moves the reported `offsetMs` at once and the corrected time ({@link now})
 * does not jump. A sample that contradicts the estimate (their error intervals do not overlap:
 * the backend restarted with another clock, a failover to another host) replaces all older
 * samples. With no sample yet, {@link now} is the local clock.
 */
export class ClockOffsetEstimator {
  private samples: KeptSample[] = [];
  /** The kept sample with the smallest bound, kept up to date by `record`/`reset` (see `pick`). */
  private bestKept: KeptSample | null = null;
  private readonly maxSamples: number;
  private readonly resolutionMs: number;

  constructor(
    private readonly clock: Clock,
    options: OffsetEstimatorOptions = {},
  ) {
    this.maxSamples = Math.max(1, Math.floor(options.maxSamples ?? 8));
    this.resolutionMs = Math.max(0, options.resolutionMs ?? 1);
  }

  /**
   * Adds a sample. Returns `true` when the estimate changed. Samples with a negative round trip
   * or a non-finite time are ignored.
   */
  record(sample: ClockSample): boolean {
    const rtt = sample.receivedMono - sample.sentMono;
    if (!(rtt >= 0) || !Number.isFinite(sample.backendTime)) return false;
    const kept: KeptSample = {
      monoOffset: sample.backendTime + this.resolutionMs / 2 - (sample.sentMono + rtt / 2),
      rtt,
      at: sample.receivedMono,
    };
    const before = this.best();
    if (before && !this.agrees(before, kept)) this.samples = [];
    this.samples.push(kept);
    if (this.samples.length > this.maxSamples) this.samples.shift();
    this.bestKept = this.pick();
    return this.bestKept !== before;
  }

  /** The current estimate, or `null` with no sample yet. */
  estimate(): ClockOffset | null {
    const best = this.best();
    if (!best) return null;
    const wallMinusMono = this.clock.now() - this.clock.monotonic();
    return {
      offsetMs: Math.floor(best.monoOffset - wallMinusMono),
      rttMs: best.rtt,
      boundMs: this.boundOf(best),
      samples: this.samples.length,
    };
  }

  /** The backend's clock as estimated now, epoch ms; the local wall clock with no sample. */
  now(): number {
    const best = this.best();
    if (!best) return this.clock.now();
    // floored like the backend times it is estimated from (never rounds a fire's time early)
    return Math.floor(this.clock.monotonic() + best.monoOffset);
  }

  /** Forgets every sample (the local clock is used until the next one). */
  reset(): void {
    this.samples = [];
    this.bestKept = null;
  }

  private boundOf(s: KeptSample): number {
    const age = Math.max(0, this.clock.monotonic() - s.at);
    return s.rtt / 2 + this.resolutionMs / 2 + age * DRIFT_PER_MS;
  }

  /** The kept sample with the smallest bound (newest on a tie); read on every `now()`. */
  private best(): KeptSample | null {
    return this.bestKept;
  }

  /**
   * Finds the kept sample with the smallest bound (newest on a tie). The bounds of two samples
   * differ by `(rtt₁ − rtt₂)/2 − (at₁ − at₂)·DRIFT_PER_MS`, whatever the time: the age
   * allowance grows alike for all, so the best sample only changes when a sample is added or
   * dropped, and `now()` (every wall time the scheduler reads) needs no clock read to find it.
   */
  private pick(): KeptSample | null {
    let best: KeptSample | null = null;
    let key = Number.POSITIVE_INFINITY;
    for (const s of this.samples) {
      const k = s.rtt / 2 - s.at * DRIFT_PER_MS;
      if (k <= key) {
        best = s;
        key = k;
      }
    }
    return best;
  }

  /** Whether the error intervals of the estimate and a new sample overlap. */
  private agrees(estimate: KeptSample, sample: KeptSample): boolean {
    const gap = Math.abs(estimate.monoOffset - sample.monoOffset);
    return gap <= this.boundOf(estimate) + this.boundOf(sample);
  }
}
