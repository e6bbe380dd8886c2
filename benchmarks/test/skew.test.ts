import { describe, expect, it } from 'vitest';
import { skewTable, skewViolations } from '../src/skew/report.js';
import type { SkewRow } from '../src/skew/run.js';
import { summarize } from '../src/stats.js';

const row = (over: Partial<SkewRow>): SkewRow => ({
  ...{ backend: 'postgres', mode: 'skewed', jobs: 3, ran: 3, duplicates: 0, missed: 0 },
  lateness: summarize([2, 3, 4]),
  instances: [
    { skewMs: 3000, runs: 3, early: 2, estimate: { offsetMs: -3000, rttMs: 2, boundMs: 1.5 } },
  ],
  failure: null,
  ...over,
});

describe('skew scenario accounting', () => {
  it('flags early runs on backend-clock locks only, duplicates, missed jobs and failures', () => {
    expect(skewViolations([row({})])).toEqual([]);
    expect(skewViolations([row({ lateness: summarize([-2900, 3]) })])).toEqual([
      'skew postgres skewed: a run started 2900 ms before its time (real clock)',
    ]);
    expect(skewViolations([row({ lateness: summarize([-200, 3]) })])).toEqual([]); // within 250 ms
    // etcd is judged once its lock measured the etcd host's clock (every instance has an estimate)
    expect(skewViolations([row({ backend: 'etcd', lateness: summarize([-2900]) })])).toEqual([
      'skew etcd skewed: a run started 2900 ms before its time (real clock)',
    ]);
    const fallback = [{ skewMs: 3000, runs: 3, early: 3, estimate: null }];
    expect(
      skewViolations([row({ backend: 'etcd', instances: fallback, lateness: summarize([-2900]) })]),
    ).toEqual([]);
    expect(skewViolations([row({ duplicates: 1, missed: 2 })])).toEqual([
      'skew postgres skewed: 1 duplicate runs',
      'skew postgres skewed: 2 jobs never ran',
    ]);
    expect(skewViolations([row({ failure: 'libfaketime not found' })])).toEqual([
      'skew postgres skewed: did not run: libfaketime not found',
    ]);
  });

  it('renders each instance skew with its estimate', () => {
    expect(skewTable([row({})])).toContain('+3000: -3000 ± 1.5 (3 runs, 2 early)');
  });
});
