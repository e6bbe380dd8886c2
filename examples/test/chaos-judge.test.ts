import { every } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { busiestInstance, planFaults } from '../chaos/faults.js';
import type { ChaosJob } from '../chaos/jobs.js';
import { type JudgeInput, judge } from '../chaos/judge.js';
import type { LedgerLine } from '../chaos/ledger.js';

// monotonic ms = real epoch ms − EPOCH: fire times and ledger times line up simply
const EPOCH = 1_800_000_000_000;
const LEASE = 3_000;
const jobs: ChaosJob[] = [
  { name: 'a', trigger: every(1_000), workMs: 100, overlap: 'skip' },
  { name: 'b', trigger: every(1_000), workMs: 100, overlap: 'allow' },
];

type Fire = { job: string; fireAt: number; token: number; instance?: string };
const at = (mono: number, kind: LedgerLine['kind'], fire: Fire, extra: Partial<LedgerLine> = {}) =>
  ({ instance: 'i#1', ...fire, kind, mono, wall: mono + EPOCH, ...extra }) as LedgerLine;

/** A clean run of one fire: claim at fireAt, start 5 ms later, end and finish 100 ms later. */
function run(fire: Fire, shift = 0): LedgerLine[] {
  const t = fire.fireAt - EPOCH + shift;
  return [
    at(t, 'won', fire),
    at(t + 5, 'start', fire),
    at(t + 105, 'end', fire, { outcome: 'ok' }),
    at(t + 106, 'finished', fire, { status: 'succeeded' }),
  ];
}

/** Every fire of both jobs in (0, 10 s] ran once, tokens in order. */
function cleanLedger(): LedgerLine[] {
  const lines: LedgerLine[] = [];
  for (let s = 1; s <= 10; s++) {
    lines.push(...run({ job: 'a', fireAt: EPOCH + s * 1000, token: s }));
    lines.push(...run({ job: 'b', fireAt: EPOCH + s * 1000, token: 100 + s }));
  }
  return lines;
}

function input(lines: LedgerLine[]): JudgeInput {
  return {
    lines: [...lines].sort((x, y) => x.mono - y.mono),
    jobs,
    leaseMs: LEASE,
    faults: [],
    epochMinusMono: EPOCH,
    countFrom: EPOCH + 1_000,
    countTo: EPOCH + 10_000,
  };
}

describe('chaos judge', () => {
  it('passes a clean ledger and counts every fire', () => {
    const v = judge(input(cleanLedger()));
    expect(v.runs).toBe(20);
    expect(v.expectedOutside).toBe(20);
    expect([v.duplicates, v.tokenOrder, v.startedAfterDeadline, v.succeededAfterDeadline]).toEqual([
      [],
      [],
      [],
      [],
    ]);
    expect(v.missedOutside).toEqual([]);
    expect(v.statuses).toEqual({ succeeded: 20 });
  });

  it('finds a fire started twice', () => {
    const lines = cleanLedger();
    lines.push(...run({ job: 'b', fireAt: EPOCH + 4_000, token: 200, instance: 'j#1' }, 50));
    expect(judge(input(lines)).duplicates).toEqual([
      expect.stringMatching(/^b fire .* started 2x: i#1 token 104, j#1 token 200/),
    ]);
  });

  it('finds an older token starting after a newer one (exclusive jobs only)', () => {
    const lines = cleanLedger().filter((l) => !(l.job === 'a' && l.fireAt === EPOCH + 3_000));
    // fire 3 of job a was claimed with token 3 in time but started after fire 4 (token 4)
    const late = { job: 'a', fireAt: EPOCH + 3_000, token: 3 };
    lines.push(at(3_000, 'won', late), at(4_500, 'start', late));
    const v = judge(input(lines));
    expect(v.tokenOrder).toEqual([expect.stringMatching(/^a: i#1 started token 3 .* token 4$/)]);
    expect(v.startedAfterDeadline).toEqual([]);
  });

  it('finds a run started past its lease, and one that ended past it recorded succeeded', () => {
    const lines = cleanLedger();
    const frozenStart = { job: 'b', fireAt: EPOCH + 20_000, token: 120 };
    lines.push(at(20_000, 'won', frozenStart), at(20_000 + LEASE + 1, 'start', frozenStart));
    const frozenRun = { job: 'b', fireAt: EPOCH + 30_000, token: 130 };
    lines.push(
      at(30_000, 'won', frozenRun),
      at(30_010, 'start', frozenRun),
      at(31_000, 'renewed', frozenRun),
      at(31_000 + LEASE + 500, 'end', frozenRun, { outcome: 'ok' }),
      at(31_000 + LEASE + 501, 'finished', frozenRun, { status: 'succeeded' }),
    );
    const v = judge(input(lines));
    expect(v.startedAfterDeadline).toEqual([expect.stringMatching(/token 120 .* 1 ms past/)]);
    expect(v.succeededAfterDeadline).toEqual([expect.stringMatching(/token 130 .* 500 ms past/)]);
  });

  it('accepts a late end recorded lease_lost, and takes the Store status over the ledger', () => {
    const lines = cleanLedger();
    const frozenRun = { job: 'b', fireAt: EPOCH + 30_000, token: 130 };
    lines.push(
      at(30_000, 'won', frozenRun),
      at(30_010, 'start', frozenRun),
      at(30_000 + LEASE + 500, 'end', frozenRun, { outcome: 'ok' }),
      at(30_000 + LEASE + 501, 'finished', frozenRun, { status: 'lease_lost' }),
    );
    expect(judge(input(lines)).succeededAfterDeadline).toEqual([]);
    const storeStatuses = new Map([[`b|${EPOCH + 30_000}|130`, 'succeeded']]);
    expect(judge({ ...input(lines), storeStatuses }).succeededAfterDeadline).toHaveLength(1);
  });

  it('counts a fire that never ran as missed, unless skipped by policy or inside a fault', () => {
    const gone = (l: LedgerLine) => l.fireAt === EPOCH + 5_000;
    const lines = cleanLedger().filter((l) => !gone(l));
    expect(judge(input(lines)).missedOutside).toHaveLength(2);
    const skipped = at(5_000, 'skipped', { job: 'a', fireAt: EPOCH + 5_000, token: 0 });
    expect(judge(input([...lines, { ...skipped, reason: 'overlap' }])).missedOutside).toEqual([
      expect.stringMatching(/^b fire/),
    ]);
    const fault = { kind: 'server_restart' as const, from: 4_900, to: 5_000 };
    const v = judge({ ...input(lines), faults: [fault] });
    expect(v.missedOutside).toEqual([]);
    expect(v.missedInside).toBe(2);
  });

  it('flags an instance whose wall clock is not skewed as asked', () => {
    const boot = (skewMs: number, wallOff: number) =>
      ({ kind: 'boot', instance: 'x#1', mono: 1, wall: EPOCH + 1 + wallOff, skewMs }) as LedgerLine;
    expect(judge(input([boot(3_000, 3_050)])).skewErrors).toEqual([]);
    expect(judge(input([boot(3_000, 0)])).skewErrors).toHaveLength(1);
  });

  it('plans one full cycle of the four faults for a short run, more for a soak run', () => {
    const short = planFaults(20);
    expect(short.seconds).toBe(28);
    expect(short.faults.map((f) => f.kind)).toEqual([
      'kill',
      'freeze',
      'server_restart',
      'drop_connections',
    ]);
    // 7 s quiet, 23 cycles 26 s apart (the last one 16 s long), 5 s quiet: exactly 600 s
    const soak = planFaults(600);
    expect(soak.faults).toHaveLength(4 * 23);
    expect(soak.seconds).toBe(600);
  });

  it('plans only the faults a backend takes (SQLite: kill and freeze)', () => {
    const short = planFaults(20, ['kill', 'freeze']);
    expect(short.seconds).toBe(22);
    expect(short.faults).toEqual([
      { kind: 'kill', atSeconds: 7 },
      { kind: 'freeze', atSeconds: 10 },
    ]);
  });

  it('aims process faults at the live incarnation with the most runs in progress', () => {
    const line = (kind: LedgerLine['kind'], instance: string, mono: number) =>
      ({ kind, instance, mono, wall: mono, real: mono }) as LedgerLine;
    const lines = [
      line('boot', 'a#1', 1),
      line('boot', 'b#1', 2),
      line('start', 'a#1', 3),
      line('start', 'a#1', 4),
      line('start', 'b#1', 5),
    ];
    expect(busiestInstance(lines, ['a', 'b'])).toBe('a');
    // a#1 was killed with two runs open; its new incarnation runs nothing yet
    expect(busiestInstance([...lines, line('boot', 'a#2', 6)], ['a', 'b'])).toBe('b');
  });
});
