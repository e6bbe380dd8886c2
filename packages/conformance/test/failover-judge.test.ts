import { describe, expect, it } from 'vitest';
import { type FailoverRun, judgeFailover } from '../src/index.js';

// The failover judge on hand-made ledgers: each rule fires on the ledger that breaks it, and the
// figures (resume, lost) count what the ledger shows.

const jobs = ['a', 'b'];
const run = (job: string, fireAt: number, token: number, instanceId = 'i1'): FailoverRun => ({
  job,
  fireAt,
  instanceId,
  token,
  startedAt: fireAt + 5,
});
/** Every job at every fire from `from` to `to` (ms), tokens increasing. */
function steady(from: number, to: number, skip: (job: string, t: number) => boolean = () => false) {
  const runs: FailoverRun[] = [];
  let token = 1;
  for (let t = from; t <= to; t += 1000) {
    for (const job of jobs) if (!skip(job, t)) runs.push(run(job, t, token++));
  }
  return runs;
}
const base = { jobs, periodMs: 1000, firstFireAt: 0, faultsAt: [5000], lastFireAt: 12_000 };

describe('judgeFailover', () => {
  it('a clean ledger: no violation, resume at the fault, nothing lost', () => {
    const report = judgeFailover({ ...base, runs: steady(0, 12_000) });
    expect(report).toMatchObject({ duplicates: [], tokenOrder: [], missedBeforeFault: [] });
    expect(report.faults).toEqual([{ at: 5000, resumeMs: 0, firstRunMs: 5, lost: 0 }]);
    expect(report.fires).toBe(26);
  });

  it('counts the fires lost after the fault and the time until every job runs again', () => {
    const runs = steady(
      0,
      12_000,
      (job, t) => (t >= 5000 && t < 8000) || (job === 'a' && t === 8000),
    );
    const [fault] = judgeFailover({ ...base, runs }).faults;
    expect(fault).toMatchObject({ resumeMs: 4000, lost: 7, firstRunMs: 3005 });
  });

  it('a gap after the resume moves the resume past it', () => {
    const runs = steady(0, 12_000, (job, t) => job === 'b' && t === 11_000);
    expect(judgeFailover({ ...base, runs }).faults[0]?.resumeMs).toBe(7000);
  });

  it('never resumed: resumeMs null', () => {
    const runs = steady(0, 12_000, (job, t) => job === 'a' && t === 12_000);
    expect(judgeFailover({ ...base, runs }).faults[0]?.resumeMs).toBeNull();
  });

  it('reports a fire that ran twice', () => {
    const runs = [...steady(0, 12_000), run('a', 6000, 999, 'i2')];
    const report = judgeFailover({ ...base, runs });
    expect(report.duplicates).toHaveLength(1);
    expect(report.duplicates[0]).toContain('ran 2 times');
  });

  it('reports tokens that do not increase with fire times', () => {
    const runs = steady(0, 12_000).map((r) =>
      r.job === 'b' && r.fireAt === 7000 ? { ...r, token: 1 } : r,
    );
    const { tokenOrder } = judgeFailover({ ...base, runs });
    expect(tokenOrder).toHaveLength(1);
    expect(tokenOrder[0]).toMatch(/^b: fire .*07\.000Z token 1 /);
  });

  it('reports fires missed before the fault', () => {
    const runs = steady(0, 12_000, (job, t) => job === 'a' && t === 2000);
    expect(judgeFailover({ ...base, runs }).missedBeforeFault).toEqual([
      `a fire ${new Date(2000).toISOString()}`,
    ]);
  });
});
