import type { TopLevelSpec } from 'vega-lite';
import type { JobAccount } from '../accounting.js';
import type { ClaimMode } from '../scale/cell.js';
import { ratio, type Summary, summarize } from '../stats.js';
import { int, ms, times } from './format.js';
import { table } from './markdown.js';

/** One cell of the scale scenario: `jobsPerWake` jobs due together at each of `wakes` wakes. */
export interface FleetRow extends JobAccount {
  backend: string;
  /** Schedulers in the cell. */
  instances: number;
  /** Processes they ran in (1 for memory: a MemoryLock cannot be shared between processes). */
  processes: number;
  mode: ClaimMode;
  jobsPerWake: number;
  wakes: number;
  /** Run start − scheduled time of every run in the ledger, ms. */
  lateness: Summary;
  won: number;
  lost: number;
  busy: number;
  failed: number;
  /** Claims refused `early` and sent again (the instance's estimate of the fleet clock ran ahead). */
  early: number;
  complete: boolean;
  /** ms from the last wake until every claim was answered. */
  settledAfterMs: number;
  /** ms from the first wake until the last process had started its schedulers (≤ 0: in time). */
  startedAfterMs: number;
  /** Leader cells: when the first leader was elected, ms after the first wake (`null`: none). */
  electedAfterMs: number | null;
  /** Fires sent to the backend over all instances (single claims + batched requests) per job. */
  claimsPerFire: number;
  /** Lock calls per instance per wake (mean over instances). */
  perWake: { claim: number; claimMany: number; batchedFires: number; release: number };
  /** Ledger files read and lines that did not parse (a torn write). */
  ledger: { files: number; torn: number };
  /** Wall time of the cell, from sending it to the instances until it was judged, ms. */
  wallMs?: number;
  /** 1-minute load average of the machine when the cell began (other work on the 2 cores). */
  loadAverage?: number;
  /** `lock.inspect` cross-check: `ok`, `n/a` or the mismatches. */
  verified: string;
  /** The cell could not run in this mode (`n/a: …`): reported, not a failure. */
  unavailable?: string;
  /** The cell failed to run. */
  failure?: string;
}

/** A row for a cell that did not run (yet). */
export function emptyRow(
  backend: string,
  mode: ClaimMode,
  jobsPerWake: number,
  wakes: number,
  processes: number,
): FleetRow {
  return {
    ...{ backend, instances: 4, processes, mode, jobsPerWake, wakes },
    ...{ jobs: jobsPerWake * wakes, ran: 0, duplicates: 0, missed: 0, skippedUnavailable: 0 },
    ...{ lateness: summarize([]), won: 0, lost: 0, busy: 0, failed: 0, early: 0 },
    complete: false,
    ...{ settledAfterMs: 0, startedAfterMs: 0, verified: 'n/a' },
    ...{ electedAfterMs: null, claimsPerFire: 0 },
    perWake: { claim: 0, claimMany: 0, batchedFires: 0, release: 0 },
    ledger: { files: 0, torn: 0 },
  };
}

/** Goal of lateness p99 at {@link GOAL_JOBS} jobs × 4 instances on this 2-core machine, ms. */
export const LATENESS_GOAL_MS: Readonly<Record<string, number>> = {
  memory: 50,
  redis: 50,
  postgres: 50,
  etcd: 250,
};
/** The job count the lateness goal is set for. */
export const GOAL_JOBS = 1000;
/** At 10× the jobs, p99 may grow at most this many times. */
export const GROWTH_GOAL = 10;

/** Violations of the scale scenario: a cell that failed, duplicates, missed jobs, bad ledger. */
export function scaleViolations(rows: readonly FleetRow[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const at = `scale ${r.backend} ${r.mode} ${r.jobsPerWake} jobs × ${r.wakes} wakes`;
    if (r.failure) out.push(`${at}: did not run: ${r.failure}`);
    if (r.unavailable || r.failure) continue;
    if (r.duplicates > 0) out.push(`${at}: ${r.duplicates} duplicate runs`);
    if (r.missed > 0) out.push(`${at}: ${r.missed} jobs never ran`);
    if (r.ledger.torn > 0) out.push(`${at}: ${r.ledger.torn} torn ledger lines`);
    if (r.verified !== 'ok' && r.verified !== 'n/a') out.push(`${at}: inspect: ${r.verified}`);
  }
  return out;
}

/** One backend × mode against the goals. */
export interface GoalRow {
  backend: string;
  mode: ClaimMode;
  singleP99: number | null;
  /** The job count judged against the lateness goal (the smallest measured one above 1). */
  jobs: number | null;
  p99: number | null;
  /** p99 at `jobs` ÷ p99 of a single job. */
  vsSingle: number | null;
  goalMs: number | null;
  /** `null` when not judged (no goal for the backend, or `jobs` is not {@link GOAL_JOBS}). */
  met: boolean | null;
  p99At10x: number | null;
  growth: number | null;
  growthMet: boolean | null;
}

const measured = (r: FleetRow | undefined): r is FleetRow =>
  r !== undefined && !r.unavailable && !r.failure && r.lateness.count > 0;

/** The goal rows of every backend × mode that has measured cells. */
export function scaleGoals(rows: readonly FleetRow[]): GoalRow[] {
  const keys = [...new Set(rows.map((r) => `${r.backend}\u0000${r.mode}`))];
  return keys.flatMap((key) => {
    const [backend, mode] = key.split('\u0000') as [string, ClaimMode];
    const own = rows.filter((r) => r.backend === backend && r.mode === mode && measured(r));
    if (own.length === 0) return [];
    const single = own.find((r) => r.jobsPerWake === 1);
    const counts = own.map((r) => r.jobsPerWake).filter((n) => n > 1);
    const jobs = counts.length ? Math.min(...counts) : null;
    const at = own.find((r) => r.jobsPerWake === jobs);
    const big = own.find((r) => jobs !== null && r.jobsPerWake === jobs * 10);
    const goalMs = LATENESS_GOAL_MS[backend] ?? null;
    const p99 = at?.lateness.p99 ?? null;
    const growth = ratio(big?.lateness.p99, p99);
    return [
      {
        ...{ backend, mode, singleP99: single?.lateness.p99 ?? null, jobs, p99 },
        vsSingle: ratio(p99, single?.lateness.p99),
        goalMs,
        met: goalMs !== null && jobs === GOAL_JOBS && p99 !== null ? p99 <= goalMs : null,
        p99At10x: big?.lateness.p99 ?? null,
        growth,
        growthMet: growth === null ? null : growth <= GROWTH_GOAL,
      },
    ];
  });
}

const verdict = (met: boolean | null): string => (met === null ? '–' : met ? 'met' : 'missed');
const label = (r: Pick<FleetRow, 'backend' | 'processes' | 'instances'>): string =>
  r.processes === 1 && r.instances > 1
    ? `${r.backend} (${r.instances} schedulers, 1 process)`
    : `${r.backend} (${r.processes} processes)`;
const fixed = (n: number): string => (Number.isInteger(n) ? int(n) : n.toFixed(1));

/** The goals table. */
export function goalsTable(goals: readonly GoalRow[]): string {
  return table(
    [
      'backend',
      'mode',
      'p99 1 job ms',
      'jobs',
      'p99 ms',
      'p99 ÷ 1 job',
      'goal ms',
      'goal',
      'p99 at 10× ms',
      '10× ÷ 1×',
      '≤ 10×',
    ],
    goals.map((g) => [
      ...[g.backend, g.mode, ms(g.singleP99 ?? Number.NaN), g.jobs === null ? '–' : int(g.jobs)],
      ...[ms(g.p99 ?? Number.NaN), times(g.vsSingle), g.goalMs === null ? '–' : String(g.goalMs)],
      ...[verdict(g.met), ms(g.p99At10x ?? Number.NaN), times(g.growth), verdict(g.growthMet)],
    ]),
    ['left', 'left'],
  );
}

const callsCell = (w: FleetRow['perWake']): string =>
  `${fixed(w.claim)} / ${fixed(w.claimMany)}${w.claimMany ? ` (${fixed(w.batchedFires / w.claimMany)} fires/call)` : ''}`;

const answeredCell = (r: FleetRow): string => {
  const late = r.startedAfterMs > 0 ? ` (started ${ms(r.startedAfterMs)} ms late)` : '';
  const elected =
    r.mode !== 'leader'
      ? ''
      : r.electedAfterMs === null
        ? ' (no leader elected)'
        : r.electedAfterMs > 0
          ? ` (leader elected ${ms(r.electedAfterMs)} ms after the fire)`
          : '';
  return `${ms(r.settledAfterMs)} ms${r.complete ? '' : ' (deadline)'}${late}${elected}`;
};

/** The cells table: one row per backend × mode × job count. */
export function scaleTable(rows: readonly FleetRow[]): string {
  const headers = [
    ...['backend', 'mode', 'jobs due together × wakes', 'ran', 'duplicates', 'missed'],
    ...['skipped (claim failed)', 'lateness p50 ms', 'p99 ms', 'max ms', 'claims per fire'],
    ...['claim / claimMany calls per instance per wake', 'releases per instance per wake'],
    ...['all claims answered after', 'inspect', 'load average'],
  ];
  return table(
    headers,
    rows.map((r) => {
      const head = [label(r), r.mode, `${int(r.jobsPerWake)} × ${r.wakes}`];
      if (r.unavailable || r.failure) {
        const blank = headers.slice(4, -3).map(() => '');
        return [...head, r.unavailable ?? 'failed', ...blank, r.failure ?? '', '', ''];
      }
      return [
        ...[...head, int(r.ran), int(r.duplicates), int(r.missed), int(r.skippedUnavailable)],
        ...[ms(r.lateness.p50), ms(r.lateness.p99), ms(r.lateness.max), fixed(r.claimsPerFire)],
        ...[callsCell(r.perWake), fixed(r.perWake.release), answeredCell(r), r.verified],
        r.loadAverage === undefined ? 'n/a' : r.loadAverage.toFixed(1),
      ];
    }),
    ['left', 'left', 'left'],
  );
}

/**
 * Leader mode against per-fire claims (`batched`, the same lock path) per backend and job
 * count: fires sent to the backend per job over the whole fleet (per-fire: one per instance;
 * leader: 1) and lateness p99.
 */
export function leaderTable(rows: readonly FleetRow[]): string {
  const pairs = rows.flatMap((leader) => {
    if (leader.mode !== 'leader' || !measured(leader)) return [];
    const find = (mode: ClaimMode) =>
      rows.find(
        (r) =>
          r.backend === leader.backend &&
          r.mode === mode &&
          r.jobsPerWake === leader.jobsPerWake &&
          measured(r),
      );
    return [{ leader, perFire: find('batched') ?? find('unbatched') }];
  });
  if (pairs.length === 0) return '_no leader cells measured_';
  return table(
    [
      ...['backend', 'jobs due together × wakes', 'per-fire claims: mode', 'claims per fire'],
      'p99 ms',
      ...['leader mode: claims per fire', 'p99 ms', 'leader elected (ms after the fire)'],
    ],
    pairs.map(({ leader, perFire }) => [
      ...[leader.backend, `${int(leader.jobsPerWake)} × ${leader.wakes}`],
      ...[perFire?.mode ?? 'n/a', perFire ? fixed(perFire.claimsPerFire) : 'n/a'],
      ms(perFire?.lateness.p99),
      ...[
        fixed(leader.claimsPerFire),
        ms(leader.lateness.p99),
        leader.electedAfterMs === null ? 'none' : int(leader.electedAfterMs),
      ],
    ]),
  );
}

/**
 * A vega-lite spec, two panels against jobs due together (log): lateness p99 (ms, values below
 * 1 ms drawn at 1) and claim round trips per instance per wake; colour per backend, dash per mode.
 */
export function scaleChartSpec(rows: readonly FleetRow[], title: string): TopLevelSpec {
  const points = rows.filter(measured).map((r) => ({
    backend: r.backend,
    mode: r.mode,
    jobs: r.jobsPerWake,
    p99: Math.max(1, r.lateness.p99),
    calls: Math.max(1, r.perWake.claim + r.perWake.claimMany),
  }));
  const decades = [1, 10, 100, 1000, 10_000, 100_000];
  const panel = (field: 'p99' | 'calls', label: string) => ({
    width: 360,
    height: 260,
    mark: { type: 'line', point: true },
    encoding: {
      x: {
        field: 'jobs',
        type: 'quantitative',
        scale: { type: 'log' },
        axis: { values: [...new Set(points.map((p) => p.jobs))], title: 'jobs due together' },
      },
      y: {
        field,
        type: 'quantitative',
        scale: { type: 'log' },
        axis: { values: decades, format: '~s' },
        title: label,
      },
      color: { field: 'backend', type: 'nominal' },
      strokeDash: {
        field: 'mode',
        type: 'nominal',
        legend: { symbolType: 'stroke', symbolStrokeColor: '#333', symbolStrokeWidth: 2 },
      },
    },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    data: { values: points },
    hconcat: [
      panel('p99', 'lateness p99, ms (4 instances)'),
      panel('calls', 'claim round trips per instance per wake'),
    ],
    config: { background: 'white' },
  } as TopLevelSpec;
}
