import { describe, expect, it } from 'vitest';
import { judgeRestart, type RestartLedgerLine } from '../src/restart/judge.js';

const F = 1_700_000_000_000;
const run = (job: number, fireAt: number, lateMs: number, instance = 0): RestartLedgerLine => ({
  job,
  fireAt,
  instance,
  startedAt: fireAt + lateMs,
});

describe('judgeRestart', () => {
  const timeline = { jobs: 3, before: [F], missed: [F + 10_000], after: [F + 20_000, F + 30_000] };

  it('counts a correct fire, a lost fire, a duplicate and a late fire', () => {
    const lines = [
      // before: every job once
      run(0, F, 5),
      run(1, F, 6),
      run(2, F, 7, 1),
      // missed while down: nothing ran (catch-up 'skip')
      // first fire after restart: job 2 lost, job 0 twice
      run(0, F + 20_000, 10, 0),
      run(0, F + 20_000, 12, 3),
      run(1, F + 20_000, 20),
      // second fire: all once, job 1 late by 4 s
      run(0, F + 30_000, 30),
      run(1, F + 30_000, 4_000),
      run(2, F + 30_000, 40),
    ];
    const { fires, stray } = judgeRestart(timeline, lines);
    expect(stray).toBe(0);
    expect(fires.map((f) => [f.phase, f.runs, f.ran, f.lost, f.duplicates])).toEqual([
      ['before', 3, 3, 0, 0],
      ['missed', 0, 0, 3, 0],
      ['after', 3, 2, 1, 1],
      ['after', 3, 3, 0, 0],
    ]);
    expect(fires[3]?.lateness.max).toBe(4_000);
    expect(fires[3]?.lateness.p50).toBe(40);
    expect(fires[2]?.lateness.max).toBe(20);
  });

  it('counts runs of fire times off the timeline and unknown jobs as stray', () => {
    const { stray, fires } = judgeRestart(timeline, [run(0, F + 5, 0), run(7, F, 0), run(0, F, 1)]);
    expect(stray).toBe(2);
    expect(fires[0]?.ran).toBe(1);
  });
});
