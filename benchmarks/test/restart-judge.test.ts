import { describe, expect, it } from 'vitest';
import {
  isRestartLine,
  judgeRestart,
  owedByCatchUp,
  type RestartLedgerLine,
  restartViolations,
} from '../src/restart/judge.js';
import { parseRestartOptions } from '../src/restart/options.js';

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

describe('owedByCatchUp', () => {
  const missed = [1, 2, 3, 4];
  it('owes none for skip, the newest for latest, the newest n for max', () => {
    expect(owedByCatchUp('skip', missed)).toEqual([false, false, false, false]);
    expect(owedByCatchUp('latest', missed)).toEqual([false, false, false, true]);
    expect(owedByCatchUp({ max: 3 }, missed)).toEqual([false, true, true, true]);
    expect(owedByCatchUp({ max: 9 }, missed)).toEqual([true, true, true, true]);
  });
});

describe('restartViolations', () => {
  const timeline = {
    jobs: 2,
    before: [F],
    missed: [F + 10_000, F + 20_000],
    after: [F + 30_000],
  };
  const all = (fireAt: number) => [run(0, fireAt, 1), run(1, fireAt, 1)];

  it('accepts a run where every fire is accounted for as { max: 1 } says', () => {
    const lines = [...all(F), ...all(F + 20_000), ...all(F + 30_000)];
    expect(restartViolations(judgeRestart(timeline, lines), { max: 1 })).toEqual([]);
  });

  it('names a lost later fire, a duplicate, an owed missed fire not run and one run unowed', () => {
    const lines = [
      ...all(F),
      run(0, F, 2, 1), // twice
      ...all(F + 10_000), // not owed by latest
      run(0, F + 20_000, 1), // owed: job 1 missing
      run(0, F + 30_000, 1), // job 1 lost after the restart
    ];
    const found = restartViolations(judgeRestart(timeline, lines), 'latest');
    expect(found).toHaveLength(4);
    expect(found.join('\n')).toMatch(/before\): 1 duplicate runs/);
    expect(found.join('\n')).toMatch(/after\): 1 of 2 jobs did not run/);
    expect(found.join('\n')).toMatch(/missed, owed by catch-up\): 1 of 2 jobs did not run/);
    expect(found.join('\n')).toMatch(/missed, not owed by catch-up\): 2 of 2 jobs ran/);
  });
});

describe('isRestartLine', () => {
  it('takes a whole line and refuses a torn or foreign one', () => {
    expect(isRestartLine(run(0, F, 1))).toBe(true);
    expect(isRestartLine({ job: 0, fireAt: F, instance: 0 })).toBe(false);
    expect(isRestartLine({ job: 0, latenessMs: 3 })).toBe(false);
  });
});

describe('parseRestartOptions', () => {
  it('defaults to 10,000 jobs on a 10 s cron, { max: 3 }, store on, 2 fires down, 3 judged', () => {
    const o = parseRestartOptions([]);
    expect([o.jobs, o.periodSeconds, o.catchUp, o.withStore, o.missedFires, o.afterFires]).toEqual([
      10_000,
      10,
      { max: 3 },
      true,
      2,
      3,
    ]);
    expect(o.backends).toEqual(['postgres', 'redis', 'etcd', 'sqlite']);
    expect(parseRestartOptions(['--quick', '--no-store', '--catch-up', 'latest']).jobs).toBe(200);
  });

  it('refuses a bad value naming the option', () => {
    expect(() => parseRestartOptions(['--catch-up', 'max:0'])).toThrow(/--catch-up max/);
    expect(() => parseRestartOptions(['--period', '7'])).toThrow(/--period must divide 60/);
    expect(() => parseRestartOptions(['--backends', 'memory'])).toThrow(/unknown backend "memory"/);
    expect(() => parseRestartOptions(['--overlap', 'queue'])).toThrow(/--overlap/);
  });
});
