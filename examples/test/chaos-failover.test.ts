import { describe, expect, it } from 'vitest';
import { claimsBackViolations, describeFailovers, failoverFigures } from '../chaos/failover.js';
import { type FaultWindow, planFaults } from '../chaos/faults.js';
import type { LedgerLine } from '../chaos/ledger.js';

// The HA topology option of the chaos fleet (issue #31): its plan (failovers only, at least two
// per run) and the time until claims succeed again, read from the ledger's `won` lines.

const won = (mono: number, instance = 'exact#1') =>
  ({ kind: 'won', instance, mono, wall: mono, job: 'a', fireAt: mono, token: 1 }) as LedgerLine;
const failover = (from: number, killedAt: number, to: number): FaultWindow => ({
  kind: 'failover',
  target: `leader killed at ${killedAt}`,
  from,
  to,
  killedAt,
  promotedAt: killedAt + 900,
});

describe('chaos fleet on an HA topology', () => {
  it('plans only failovers, at least two per run however short', () => {
    const short = planFaults(20, ['failover'], 2);
    // 7 s quiet, failover, 10 s quiet, failover (8 s), 5 s quiet
    expect(short.faults).toEqual([
      { kind: 'failover', atSeconds: 7 },
      { kind: 'failover', atSeconds: 25 },
    ]);
    expect(short.seconds).toBe(38);
    expect(planFaults(60, ['failover'], 2).faults).toHaveLength(3);
  });

  it('times claims back from the kill to the first claim won after it, per failover', () => {
    const faults = [failover(10_000, 10_050, 14_000), failover(30_000, 30_020, 35_000)];
    const lines = [
      won(9_990), // answered before the kill: not a claim of the survivors
      won(10_040), // between the fault's start and the kill's end: still the old leader
      won(11_800, 'fast#1'),
      won(12_000),
      won(31_020),
    ];
    const figures = failoverFigures(lines, faults);
    expect(figures.map((f) => f.claimsBackMs)).toEqual([1_750, 1_000]);
    expect(figures.map((f) => f.promotedMs)).toEqual([900, 900]);
    expect(claimsBackViolations(figures, 2_000)).toEqual([]);
    expect(claimsBackViolations(figures, 1_500)).toEqual([
      'failover 1 (leader killed at 10050): claims back after 1750 ms, bound 1500 ms',
    ]);
    expect(describeFailovers(figures, 2_000)).toBe(
      '2 failovers, claims back after 1750 / 1000 ms (bound 2000 ms), promoted after 900 / 900 ms',
    );
  });

  it('fails a failover after which no claim was won before the next one', () => {
    const faults = [failover(10_000, 10_050, 14_000), failover(30_000, 30_020, 35_000)];
    // the only win after the first kill comes after the second failover started
    const figures = failoverFigures([won(30_500)], faults);
    expect(figures.map((f) => f.claimsBackMs)).toEqual([null, 480]);
    expect(claimsBackViolations(figures, 2_000)).toEqual([
      'failover 1 (leader killed at 10050): no claim won after the kill, bound 2000 ms',
    ]);
  });
});
