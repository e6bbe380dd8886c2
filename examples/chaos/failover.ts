import type { ChaosTopologyName } from './backends.js';
import type { FaultWindow } from './faults.js';
import type { LedgerLine } from './ledger.js';

/**
 * The bound each topology states on the time from the kill of the leader/primary until a claim
 * succeeds again, ms. etcd: the election timeout (1 s) plus one second (issue #31). PostgreSQL:
 * the promotion (`pg_ctl promote -w`, about 1 s here) plus one second for the pools to reconnect
 * to the moved address and the next fire. Redis: `down-after-milliseconds` (1 s), the Sentinels'
 * vote and promotion, and ioredis asking the Sentinels again (3 to 4 s measured in
 * docs/performance/failover.md), plus one second.
 */
export const CLAIMS_BACK_BOUND_MS: Readonly<Record<ChaosTopologyName, number>> = {
  'etcd-cluster': 2_000,
  'pg-sync': 3_000,
  'pg-async': 3_000,
  'redis-sentinel': 5_000,
};

/** What the ledger says of one failover. */
export interface FailoverFigures {
  /** What was killed (and promoted). */
  killed: string;
  /** ms from the kill until the promotion was done (as the driver saw it). */
  promotedMs: number | null;
  /**
   * ms from the kill until the first claim any instance won (its `won` line); `null` when none
   * was won before the next failover or the end of the run.
   */
  claimsBackMs: number | null;
}

/**
 * Per failover fault, in order: how long until claims succeeded again, from the fleet's ledger
 * (the first `won` line after the kill; a claim answered after the old leader/primary was gone
 * was answered by the survivors).
 */
export function failoverFigures(
  lines: readonly LedgerLine[],
  faults: readonly FaultWindow[],
): FailoverFigures[] {
  const failovers = faults.filter((f) => f.kind === 'failover');
  const wins = lines
    .filter((l) => l.kind === 'won')
    .map((l) => l.mono)
    .sort((a, b) => a - b);
  return failovers.map((f, i) => {
    const killedAt = f.killedAt ?? f.from;
    const until = failovers[i + 1]?.from ?? Number.POSITIVE_INFINITY;
    const first = wins.find((mono) => mono > killedAt && mono < until);
    return {
      killed: f.target ?? 'leader/primary',
      promotedMs: f.promotedAt === undefined ? null : Math.round(f.promotedAt - killedAt),
      claimsBackMs: first === undefined ? null : Math.round(first - killedAt),
    };
  });
}

/** One line per failover whose claims did not come back within `boundMs`. */
export function claimsBackViolations(
  figures: readonly FailoverFigures[],
  boundMs: number,
): string[] {
  return figures.flatMap((f, i) =>
    f.claimsBackMs !== null && f.claimsBackMs <= boundMs
      ? []
      : [
          `failover ${i + 1} (${f.killed}): ${f.claimsBackMs === null ? 'no claim won after the kill' : `claims back after ${f.claimsBackMs} ms`}, bound ${boundMs} ms`,
        ],
  );
}

/** The figures as one line: `claims back after 1 234 / 987 ms (bound 2 000 ms)`. */
export function describeFailovers(figures: readonly FailoverFigures[], boundMs: number): string {
  const back = figures.map((f) => f.claimsBackMs ?? 'never').join(' / ');
  const promoted = figures.map((f) => f.promotedMs ?? '?').join(' / ');
  return `${figures.length} failovers, claims back after ${back} ms (bound ${boundMs} ms), promoted after ${promoted} ms`;
}
