import { describe, expect, it } from 'vitest';
import { median, percentile, perSecond, Reservoir, ratio, summarize } from '../src/stats.js';

describe('percentile (nearest rank)', () => {
  const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

  it('picks the smallest value with at least p% at or below it', () => {
    expect(percentile(sorted, 50)).toBe(5);
    expect(percentile(sorted, 95)).toBe(10);
    expect(percentile(sorted, 90)).toBe(9);
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile(sorted, 100)).toBe(10);
  });

  it('handles one value and no value', () => {
    expect(percentile([42], 99)).toBe(42);
    expect(percentile([], 50)).toBeNaN();
  });

  it('rejects a percentile outside 0..100', () => {
    expect(() => percentile(sorted, 101)).toThrow(RangeError);
    expect(() => percentile(sorted, -1)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('sorts a copy and reports the percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted
    const s = summarize(values);
    expect(s).toMatchObject({ count: 100, min: 1, max: 100, p50: 50, p95: 95, p99: 99 });
    expect(s.mean).toBeCloseTo(50.5);
    expect(values[0]).toBe(100); // input untouched
  });

  it('gives NaN figures for an empty sample', () => {
    const s = summarize([]);
    expect(s.count).toBe(0);
    expect(s.p50).toBeNaN();
    expect(s.mean).toBeNaN();
  });
});

describe('median, ratio, perSecond', () => {
  it('median of odd and even samples', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('ratio is null when it cannot be computed', () => {
    expect(ratio(50, 200)).toBe(0.25);
    expect(ratio(1, 0)).toBeNull();
    expect(ratio(null, 2)).toBeNull();
    expect(ratio(2, undefined)).toBeNull();
    expect(ratio(Number.NaN, 2)).toBeNull();
  });

  it('perSecond scales ms to seconds', () => {
    expect(perSecond(300, 1500)).toBe(200);
    expect(perSecond(10, 0)).toBe(0);
  });
});

describe('Reservoir', () => {
  it('keeps everything below capacity', () => {
    const r = new Reservoir(10);
    for (let i = 0; i < 7; i++) r.add(i);
    expect(r.values).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(r.total).toBe(7);
  });

  it('keeps a bounded, roughly uniform sample of a long stream', () => {
    const r = new Reservoir(1000, 12345);
    for (let i = 0; i < 100_000; i++) r.add(i);
    expect(r.values).toHaveLength(1000);
    expect(r.total).toBe(100_000);
    const s = summarize(r.values);
    // uniform over 0..99 999: the median of 1000 draws lies well within ±10 %
    expect(s.p50).toBeGreaterThan(40_000);
    expect(s.p50).toBeLessThan(60_000);
    expect(s.max).toBeGreaterThan(90_000);
  });

  it('is deterministic for a seed', () => {
    const a = new Reservoir(5, 7);
    const b = new Reservoir(5, 7);
    for (let i = 0; i < 500; i++) {
      a.add(i);
      b.add(i);
    }
    expect(a.values).toEqual(b.values);
  });
});
