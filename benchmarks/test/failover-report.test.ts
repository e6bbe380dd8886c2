import type { FailoverOutcome } from '@fleetcron/conformance';
import { describe, expect, it } from 'vitest';
import { parseFailoverOptions } from '../src/failover/options.js';
import {
  type FailoverRow,
  failoverViolations,
  renderFailover,
  summarizeFailover,
} from '../src/failover/report.js';

/** A judged run with plausible figures; override what a test is about. */
function outcome(overrides: Partial<FailoverOutcome> = {}): FailoverOutcome {
  return {
    fires: 60,
    runs: 55,
    duplicates: [],
    tokenOrder: [],
    missedBeforeFault: [],
    crashes: [],
    faults: [{ at: 1_000_000, resumeMs: 2000, firstRunMs: 1500, lost: 5 }],
    ...overrides,
  };
}

const row = (topology: FailoverRow['topology'], run: number, o?: FailoverOutcome): FailoverRow => ({
  topology,
  run,
  outcome: o,
  wallMs: 30_000,
});

describe('failover report', () => {
  it('puts each topology side by side with its runs, in the scenario order', () => {
    const rows = [
      row(
        'redis-sentinel',
        1,
        outcome({ faults: [{ at: 0, resumeMs: 4000, firstRunMs: 3000, lost: 10 }] }),
      ),
      row('etcd-cluster', 1, outcome()),
      row(
        'etcd-cluster',
        2,
        outcome({ faults: [{ at: 0, resumeMs: 3000, firstRunMs: 2500, lost: 10 }] }),
      ),
    ];
    const [etcd, redis] = summarizeFailover(rows);
    expect(etcd?.topology).toBe('etcd-cluster');
    expect(etcd?.resumeMs).toEqual([2000, 3000]);
    expect(etcd?.lost).toEqual([5, 10]);
    expect(etcd?.medianResumeMs).toBe(2500);
    // etcd's stated bound: election timeout 1 s + 1 s
    expect(etcd?.boundRatio).toBeCloseTo(1.25);
    expect(etcd?.fastestRatio).toBe(1);
    expect(redis?.boundRatio).toBeNull();
    expect(redis?.fastestRatio).toBeCloseTo(1.6);
    const markdown = renderFailover(rows, 'heading');
    expect(markdown).toContain(
      '| etcd, 3 members, leader SIGKILLed (`etcd-cluster`) | 0, 0 | 0, 0 | 2 000, 3 000 | 5, 10 | 2 500 | 1.25× of 2 000 ms | 1.00× |',
    );
    expect(markdown).toContain('none stated');
    expect(markdown).toContain('Verdict: no violation');
  });

  it('fails a duplicate where the design closes it, and only reports it where replication is asynchronous', () => {
    const duplicate = outcome({ duplicates: ['failover-0 fire … ran 2 times'] });
    expect(failoverViolations(row('pg-sync', 1, duplicate))).toEqual([
      'pg-sync run 1: duplicate: failover-0 fire … ran 2 times',
    ]);
    expect(failoverViolations(row('pg-async', 1, duplicate))).toEqual([]);
    expect(renderFailover([row('pg-async', 1, duplicate)], 'h')).toContain('| 1 (measured) |');
  });

  it('fails token order, crashes, claims that never came back and runs that could not be made', () => {
    const bad = outcome({
      tokenOrder: ['failover-1: …'],
      crashes: ['unhandledRejection: boom'],
      faults: [{ at: 0, resumeMs: null, firstRunMs: null, lost: 25 }],
    });
    expect(failoverViolations(row('etcd-cluster', 2, bad))).toEqual([
      'etcd-cluster run 2: unhandled error: unhandledRejection: boom',
      'etcd-cluster run 2: token order: failover-1: …',
      'etcd-cluster run 2: claims never came back after fault 1',
    ]);
    const failed: FailoverRow = {
      topology: 'redis-sentinel-ack',
      run: 1,
      failure: 'no redis-server',
      wallMs: 10,
    };
    expect(failoverViolations(failed)).toEqual([
      'redis-sentinel-ack run 1: could not run: no redis-server',
    ]);
    const [summary] = summarizeFailover([row('etcd-cluster', 1, bad)]);
    expect(summary?.resumeMs).toEqual([null]);
    expect(summary?.medianResumeMs).toBeNull();
    const markdown = renderFailover([row('etcd-cluster', 1, bad), failed], 'h');
    expect(markdown).toContain('| never |');
    expect(markdown).toContain('Verdict: 4 violation(s)');
  });

  it('parses its options and names a bad one', () => {
    expect(parseFailoverOptions([])).toMatchObject({ runs: 1, out: null });
    expect(
      parseFailoverOptions(['--topologies', 'pg-sync,etcd-cluster', '--runs', '3']),
    ).toMatchObject({
      topologies: ['pg-sync', 'etcd-cluster'],
      runs: 3,
    });
    expect(() => parseFailoverOptions(['--topologies', 'mysql'])).toThrow(
      /unknown topology "mysql"/,
    );
    expect(() => parseFailoverOptions(['--runs', '0'])).toThrow(/--runs must be an integer/);
  });
});
