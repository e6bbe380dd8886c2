import type { CellResult } from '../contention/run.js';
import type { SingleScaleResult } from '../scale/single.js';
import { skewSection } from '../skew/report.js';
import type { SkewRow } from '../skew/run.js';
import { ratio } from '../stats.js';
import { int, mib, ms, percent, times } from './format.js';
import { table } from './markdown.js';
import {
  type FleetRow,
  goalsTable,
  leaderTable,
  scaleGoals,
  scaleTable,
  scaleViolations,
} from './scale.js';

export type { FleetRow } from './scale.js';

/** The machine the figures come from. */
export interface MachineInfo {
  cpus: number;
  model: string;
  node: string;
  platform: string;
  /** 1-minute load average at the start (other work on the shared cores). */
  loadAverage: number;
  pinned: boolean;
}

/** A backend's server as used in the run. */
export interface ServerRow {
  backend: string;
  version: string;
  strategy: string;
  floor: string;
  peer: string;
}

/** fleetcron against the floor and the peer, for one backend and instance count. */
export interface RatioRow {
  backend: string;
  instances: number;
  fleetcronPerSec: number | null;
  floorPerSec: number | null;
  peerPerSec: number | null;
  /** fleetcron claims/s ÷ floor claims/s (1 = as fast as the raw client). */
  throughputVsFloor: number | null;
  /** fleetcron p50 ÷ floor p50 (1 = same latency; 2 = twice as slow). */
  p50VsFloor: number | null;
  throughputVsPeer: number | null;
  p50VsPeer: number | null;
}

/** Everything one run measured; written as JSON and rendered as markdown. */
export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  totalSeconds: number;
  mode: 'full' | 'quick';
  options: Record<string, unknown>;
  machine: MachineInfo;
  servers: ServerRow[];
  contention: CellResult[];
  ratios: RatioRow[];
  single: SingleScaleResult | { failure: string } | null;
  /** The scale scenario (`scale/fleet-run.ts`): one row per backend × mode × job count. */
  fleet: FleetRow[];
  /** The scale scenario's chart (lateness p99 against jobs due together), if rendered. */
  scaleChartFile?: string | null;
  /** The clock-skew scenario (see `skew/run.ts`), one row per backend and mode. */
  skew?: SkewRow[];
  /** Violations of once-per-fire and scenario failures: any entry makes the run exit 1. */
  failures: string[];
  chartFile: string | null;
}

/** Ratio rows for every backend × instance count that has a fleetcron cell. */
export function ratioRows(cells: readonly CellResult[]): RatioRow[] {
  const find = (backend: string, variant: string, n: number) =>
    cells.find(
      (c) => c.backend === backend && c.variant === variant && c.instances === n && !c.failure,
    );
  return cells
    .filter((c) => c.variant === 'fleetcron')
    .map((c) => {
      const own = find(c.backend, 'fleetcron', c.instances);
      const floor = find(c.backend, 'floor', c.instances);
      const peer = find(c.backend, 'peer', c.instances);
      return {
        backend: c.backend,
        instances: c.instances,
        fleetcronPerSec: own?.claimsPerSec ?? null,
        floorPerSec: floor?.claimsPerSec ?? null,
        peerPerSec: peer?.claimsPerSec ?? null,
        throughputVsFloor: ratio(own?.claimsPerSec, floor?.claimsPerSec),
        p50VsFloor: ratio(own?.latency.p50, floor?.latency.p50),
        throughputVsPeer: ratio(own?.claimsPerSec, peer?.claimsPerSec),
        p50VsPeer: ratio(own?.latency.p50, peer?.latency.p50),
      };
    });
}

/**
 * The once-per-fire violations of a run: fleetcron cells with duplicates, missed fires or an
 * inspect mismatch, fleet rows with duplicates or missed jobs, and cells that failed to run.
 */
export function violations(cells: readonly CellResult[], fleet: readonly FleetRow[]): string[] {
  const out: string[] = [];
  for (const c of cells) {
    const at = `${c.backend} ${c.variant} n=${c.instances}`;
    if (c.failure) out.push(`${at}: did not run: ${c.failure}`);
    if (c.variant !== 'fleetcron') continue;
    if (c.account.duplicates > 0) out.push(`${at}: ${c.account.duplicates} duplicate wins`);
    if (c.account.missed > 0) out.push(`${at}: ${c.account.missed} fires without a winner`);
    if (c.verified !== 'ok' && c.verified !== 'n/a') out.push(`${at}: inspect: ${c.verified}`);
  }
  out.push(...scaleViolations(fleet));
  return out;
}

const dupCell = (c: CellResult): string => {
  if (c.variant === 'fleetcron') return int(c.account.duplicates);
  // floors and peers are locks, not once-per-fire claims: a late instance may win again
  return c.account.duplicates ? `(${int(c.account.duplicates)})` : '0';
};

/** The contention table: one row per backend × variant × instance count. */
export function contentionTable(cells: readonly CellResult[]): string {
  return table(
    [
      'backend',
      'variant',
      'instances',
      'claims/s',
      'fires/s',
      'p50 ms',
      'p95 ms',
      'p99 ms',
      'won',
      'lost',
      'busy',
      'errors',
      'duplicates',
      'missed',
      'inspect',
    ],
    cells.map((c) => [
      c.backend,
      c.variant,
      String(c.instances),
      c.failure ? 'failed' : int(c.claimsPerSec),
      int(c.firesPerSec),
      ms(c.latency.p50),
      ms(c.latency.p95),
      ms(c.latency.p99),
      int(c.won),
      int(c.lost),
      int(c.busy),
      int(c.errors),
      dupCell(c),
      int(c.account.missed),
      c.verified,
    ]),
    ['left', 'left'],
  );
}

/** The ratio table. */
export function ratioTable(rows: readonly RatioRow[]): string {
  return table(
    [
      'backend',
      'instances',
      'fleetcron claims/s',
      'floor claims/s',
      'peer claims/s',
      'throughput fleetcron/floor',
      'p50 fleetcron/floor',
      'throughput fleetcron/peer',
      'p50 fleetcron/peer',
    ],
    rows.map((r) => [
      r.backend,
      String(r.instances),
      int(r.fleetcronPerSec),
      int(r.floorPerSec),
      int(r.peerPerSec),
      times(r.throughputVsFloor),
      times(r.p50VsFloor),
      times(r.throughputVsPeer),
      times(r.p50VsPeer),
    ]),
  );
}

/** The single-scheduler table (metric | value). */
export function singleTable(single: BenchReport['single']): string {
  if (!single) return '_not run_';
  if ('failure' in single) return `**failed:** ${single.failure}`;
  return table(
    ['metric', 'value'],
    [
      ['jobs', int(single.jobs)],
      [
        'add() all jobs',
        `${ms(single.addMs)} ms (${ms((single.addMs / single.jobs) * 1000)} µs/job)`,
      ],
      ['start()', `${ms(single.startMs)} ms`],
      ['pending timers (FakeClock)', int(single.fakeClockTimers)],
      ['Node Timeout handles added (real clock)', int(single.activeTimeoutHandles)],
      ['RSS before', mib(single.rssBefore)],
      ['RSS growth with all jobs', mib(single.rssGrowth)],
      ['heap growth with all jobs', mib(single.heapGrowth)],
      [`idle CPU over ${single.idleSeconds} s`, percent(single.idleCpuPercent)],
      ['earliest pending fire after idle start', `${int(single.earliestFireInMs / 1000)} s`],
    ],
  );
}

/** The whole markdown report. */
export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const parts = [
    `# fleetcron benchmarks — ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC (${report.mode})`,
    '',
    report.failures.length
      ? `**FAILED — once-per-fire violated or a scenario did not run:**\n\n${report.failures.map((f) => `- ${f}`).join('\n')}`
      : '**Once per fire held:** every fleetcron fire had exactly one winner (checked from the results and with `lock.inspect`); no fleet job ran twice, and none was missed while its claims answered.',
    '',
    '## Machine',
    '',
    table(
      ['', ''],
      [
        ['CPUs', `${m.cpus} × ${m.model}`],
        ['Node', m.node],
        ['platform', m.platform],
        ['load average at start (1 min)', m.loadAverage.toFixed(2)],
        ['pinned (`taskset -c 0`)', m.pinned ? 'yes' : 'no'],
        ['total run time', `${report.totalSeconds.toFixed(0)} s`],
        ['options', `\`${JSON.stringify(report.options)}\``],
      ],
      ['left', 'left'],
    ),
    '',
    table(
      ['backend', 'server', 'started by', 'floor', 'peer'],
      report.servers.map((s) => [s.backend, s.version, s.strategy, s.floor, s.peer]),
      ['left', 'left', 'left', 'left', 'left'],
    ),
    '',
    '## Contention: N instances racing for the same fires',
    '',
    'Every instance (own connection) claims every fire; the winner releases its lease at once. ' +
      'claims/s counts every instance’s claims (median of the rounds); fires/s counts fires decided. ' +
      'Latencies are of the claim alone. Duplicates in parentheses are of floors and peers, which are ' +
      'locks, not once-per-fire claims: after the winner releases, a later instance can win the same fire again.',
    '',
    report.chartFile ? `![claims/s and p50 against instances](${report.chartFile})\n` : '',
    contentionTable(report.contention),
    '',
    '## Ratios: fleetcron against the raw-client floor and the peer libraries',
    '',
    'Throughput ratio below 1 and p50 ratio above 1 mean fleetcron is slower. The floor is one round ' +
      'trip of the raw client; fleetcron does more per claim (claim record kept for the window, fencing ' +
      'token, lease) in the same single round trip.',
    '',
    ratioTable(report.ratios),
    '',
    '## Scheduler: many jobs in one instance (MemoryLock, real clock)',
    '',
    singleTable(report.single),
    '',
    scaleSection(report),
    report.skew ? skewSection(report.skew) : '',
  ];
  return parts.join('\n');
}

/** The markdown section of the scale scenario. */
export function scaleSection(report: Pick<BenchReport, 'fleet' | 'scaleChartFile'>): string {
  const rows = report.fleet;
  return [
    '## Scheduler: jobs due in the same second on 4 instance processes',
    '',
    'Each instance is its own process with a real `Scheduler` and its own lock and connection ' +
      '(PostgreSQL: a pool of 4); `memory` cannot share a `MemoryLock` between processes, so its 4 ' +
      'schedulers share one lock in one process. Every job is `at()` the same instant (default ' +
      "`overlap: 'skip'`: exclusive claims). `unbatched`: the scheduler sees the lock without its " +
      'batch methods and takes its path for such locks (single claims, at most `maxConcurrentClaims` ' +
      "= 16 in flight); `batched`: `lock.claimMany` with the scheduler's default `claimBatchSize`; " +
      "n/a where the lock has no `claimMany`; `leader`: scheduler `mode: 'leader'` with the backend's " +
      'elector (a fresh election per cell, elected before the fire), only the leader claims, batched ' +
      'where the lock can (n/a without an elector: SQLite). Lateness is run start − scheduled time of the winning run, ' +
      'read from the ledger the instances append to (duplicates and missed are judged from it, ' +
      'cross-checked with `lock.inspect`). Lock calls are counted by a thin wrapper around each ' +
      "instance's lock. The single-job reference (`1 × n`) fires one job per wake, n wakes 200 ms apart.",
    '',
    rows.length ? scaleTable(rows) : '_not run_',
    '',
    report.scaleChartFile
      ? `![lateness p99 against jobs due together](${report.scaleChartFile})\n`
      : '',
    '### Leader mode against per-fire claims (issue #16)',
    '',
    'Claims per fire: fires sent to the backend (single claims + requests inside `claimMany` ' +
      'batches) over all 4 instances, per job. Per-fire claiming sends one per instance (4, more ' +
      'when a claim is refused `early` and sent again); in leader mode only the leader claims.',
    '',
    rows.length ? leaderTable(rows) : '_not run_',
    '',
    '### Against the goals (2-core machine)',
    '',
    'Goal: lateness p99 at 1 000 jobs × 4 instances ≤ 50 ms on memory, Redis and PostgreSQL, ' +
      '≤ 250 ms on etcd (none set for SQLite); at 10 000 jobs ≤ 10× the 1 000-job figure. ' +
      'Reported, never asserted.',
    '',
    rows.length ? goalsTable(scaleGoals(rows)) : '_not run_',
    '',
    rows.some((f) => f.skippedUnavailable > 0)
      ? 'Skipped jobs are fail-closed, by design: a claim that throws (the adapter’s operation ' +
        'timeout passed while thousands of claims queued at once) is never run unprotected and is ' +
        'not a duplicate or a missed fire in the lock’s sense.\n'
      : '',
  ].join('\n');
}
