import type { CellResult } from '../src/contention/run.js';
import type { BenchReport, FleetRow } from '../src/report/report.js';
import { emptyRow } from '../src/report/scale.js';
import { summarize } from '../src/stats.js';

/** A contention cell with plausible figures; override what a test is about. */
export function cell(overrides: Partial<CellResult>): CellResult {
  return {
    backend: 'redis',
    variant: 'fleetcron',
    instances: 2,
    workers: 2,
    rounds: 1,
    claimsPerSec: 1000,
    claimsPerSecRounds: [1000],
    firesPerSec: 500,
    claims: 1000,
    won: 500,
    lost: 500,
    busy: 0,
    errors: 0,
    releaseErrors: 0,
    latency: summarize([1, 2, 3]),
    release: summarize([1]),
    account: { fires: 500, exactlyOnce: 500, duplicates: 0, missed: 0, unresolved: 0 },
    verified: 'ok',
    ...overrides,
  };
}

/** A scale-scenario row with plausible figures (redis, unbatched, 10 jobs due together). */
export function fleetRow(overrides: Partial<FleetRow>): FleetRow {
  return {
    ...emptyRow('redis', 'unbatched', 10, 1, 4),
    ran: 10,
    lateness: summarize([5, 10, 20]),
    won: 10,
    lost: 30,
    complete: true,
    settledAfterMs: 40,
    startedAfterMs: -500,
    perWake: { claim: 10, claimMany: 0, batchedFires: 0, release: 2.5 },
    claimsPerFire: 4,
    ledger: { files: 4, torn: 0 },
    verified: 'ok',
    ...overrides,
  };
}

/** A minimal report around `contention` and `fleet`. */
export function report(
  contention: CellResult[],
  fleet: FleetRow[],
  failures: string[] = [],
): BenchReport {
  return {
    startedAt: '2026-11-30T05:00:00.000Z',
    finishedAt: '2026-11-30T05:10:00.000Z',
    totalSeconds: 600,
    mode: 'full',
    options: { instances: [1, 2] },
    machine: {
      cpus: 2,
      model: 'AMD EPYC',
      node: 'v20.20.2',
      platform: 'Linux',
      loadAverage: 1.5,
      pinned: false,
    },
    servers: [
      {
        backend: 'redis',
        version: '7.0.15',
        strategy: 'local',
        floor: 'SET NX PX',
        peer: 'redlock',
      },
    ],
    contention,
    ratios: [],
    single: null,
    fleet,
    failures,
    chartFile: 'x.svg',
  };
}
