import { describe, expect, it } from 'vitest';
import { parseOptions } from '../src/options.js';

describe('parseOptions', () => {
  it('defaults to the full run', () => {
    const o = parseOptions([], 2);
    expect(o).toMatchObject({
      backends: ['memory', 'postgres', 'redis', 'etcd', 'sqlite'],
      scenarios: ['scheduler', 'contention', 'scale', 'skew'],
      instances: [1, 2, 4, 8, 16, 32],
      durationSeconds: 3,
      rounds: 3,
      workers: 2,
      scaleJobs: 10_000,
      fleetJobs: [1000, 10_000],
      singleWakes: 5,
      skewModes: ['unskewed', 'skewed'],
      skewLeadMs: 8000,
      quick: false,
      pin: false,
      out: null,
    });
  });

  it('--quick shrinks every scenario, explicit options still win', () => {
    const o = parseOptions(['--quick', '--instances', '4,1', '--out', 'x'], 8);
    expect(o).toMatchObject({
      quick: true,
      instances: [1, 4],
      durationSeconds: 0.3,
      rounds: 1,
      workers: 8,
      out: 'x',
    });
    expect(o.scaleJobs).toBeLessThan(10_000);
    expect(o.fleetJobs).toEqual([200]);
    // the skew scenario still fires on every skew backend, skewed only and sooner
    expect(o.skewModes).toEqual(['skewed']);
    expect(o.skewLeadMs).toBeLessThan(8000);
  });

  it('takes backends, duration and pin', () => {
    const o = parseOptions(['--backends', 'redis,etcd', '--duration', '1.5', '--pin'], 2);
    expect(o.backends).toEqual(['redis', 'etcd']);
    expect(o.durationSeconds).toBe(1.5);
    expect(o.pin).toBe(true);
  });

  it("takes the scale scenario's job counts as a sorted list", () => {
    expect(parseOptions(['--fleet-jobs', '10000,1000,1000'], 2).fleetJobs).toEqual([1000, 10_000]);
    expect(() => parseOptions(['--fleet-jobs', '1000,-5'], 2)).toThrow(/--fleet-jobs/);
  });

  it('takes scenarios in run order and rejects unknown ones', () => {
    expect(parseOptions(['--scenarios', 'skew,scale'], 2).scenarios).toEqual(['scale', 'skew']);
    expect(() => parseOptions(['--scenarios', 'scale,fleet'], 2)).toThrow(
      /--scenarios: unknown scenario "fleet"/,
    );
  });

  it('rejects unknown backends, bad numbers and unknown flags', () => {
    expect(() => parseOptions(['--backends', 'mysql'], 2)).toThrow(/unknown backend "mysql"/);
    expect(() => parseOptions(['--instances', '1,0'], 2)).toThrow(/--instances/);
    expect(() => parseOptions(['--duration', 'abc'], 2)).toThrow(/--duration/);
    expect(() => parseOptions(['--nope'], 2)).toThrow();
  });
});
