/** Latency and throughput arithmetic shared by every scenario. Pure functions. */

/** Percentiles and extremes of a sample, in the sample's unit (ms for latencies). */
export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/**
 * The `p`-th percentile (0..100) of an ascending-sorted sample, by the nearest-rank method
 * (the smallest value with at least p% of the sample at or below it). `NaN` for an empty sample.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[Math.min(n, rank) - 1] as number;
}

/** Summarises a sample (any order; it is not modified). Empty → count 0 and `NaN` figures. */
export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  const n = sorted.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i] as number;
  return {
    count: n,
    min: n ? (sorted[0] as number) : Number.NaN,
    mean: n ? sum / n : Number.NaN,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: n ? (sorted[n - 1] as number) : Number.NaN,
  };
}

/** The median of a sample (mean of the two middle values when even); `NaN` when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * `a / b`, or `null` when either side is missing, not finite, or `b` is 0: a ratio that cannot
 * be computed is shown as "n/a", never as Infinity.
 */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return a / b;
}

/** Operations per second: `ops` over `ms` milliseconds (0 when no time passed). */
export function perSecond(ops: number, ms: number): number {
  return ms > 0 ? (ops * 1000) / ms : 0;
}

/**
 * A bounded uniform sample (reservoir sampling, Algorithm R): keeps at most `capacity` values,
 * each value seen so far equally likely to be kept, so percentiles of a long run stay unbiased
 * while memory and IPC stay small. Deterministic for a given `seed`.
 */
export class Reservoir {
  readonly values: number[] = [];
  private seen = 0;
  private state: number;

  constructor(
    readonly capacity: number,
    seed = 0x9e3779b9,
  ) {
    if (!(capacity >= 1)) throw new RangeError('capacity must be >= 1');
    this.state = seed >>> 0 || 1;
  }

  /** How many values were offered in total. */
  get total(): number {
    return this.seen;
  }

  add(value: number): void {
    this.seen++;
    if (this.values.length < this.capacity) {
      this.values.push(value);
      return;
    }
    const j = Math.floor(this.random() * this.seen);
    if (j < this.capacity) this.values[j] = value;
  }

  /** xorshift32: a fast, seedable generator; quality is ample for sampling. */
  private random(): number {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x1_0000_0000;
  }
}
