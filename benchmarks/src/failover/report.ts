/**
 * The failover scenario's report: per topology, the judged figures of every run side by side,
 * their ratios, and the violations that fail the run. Pure.
 */
import type { FailoverOutcome } from '@fleetcron/conformance';
import { int, times } from '../report/format.js';
import { table } from '../report/markdown.js';
import { median, ratio } from '../stats.js';
import { FAILOVER_TOPOLOGIES, type FailoverTopologyName, TOPOLOGY_INFO } from './cases.js';

/** One run of one topology: the judged outcome, or why the run could not be made. */
export interface FailoverRow {
  topology: FailoverTopologyName;
  /** 1-based run number of this topology. */
  run: number;
  /** What `runFailover` judged (absent when the run failed). */
  outcome?: FailoverOutcome;
  /** Why the run could not be made (a server that did not start, a fault that threw). */
  failure?: string;
  /** Wall time of the run, topology start and teardown included, ms. */
  wallMs: number;
}

/** The figures of one topology over its runs, in run order. */
export interface TopologySummary {
  topology: FailoverTopologyName;
  runs: number;
  duplicates: number[];
  tokenOrder: number[];
  /** Time until claims succeed again per run (first fault), ms; `null` when they never did. */
  resumeMs: (number | null)[];
  lost: number[];
  /** Fires missed before the fault (a fleet that was not working yet), per run. */
  missedBeforeFault: number[];
  /** Median of the runs' resume times, `null` when any run never resumed or none ran. */
  medianResumeMs: number | null;
  /** {@link medianResumeMs} ÷ the stated bound, when the topology has one. */
  boundRatio: number | null;
  /** {@link medianResumeMs} ÷ the fastest topology's median resume in the same report. */
  fastestRatio: number | null;
  failures: string[];
}

/** Every reason `row` fails the run: safety violations, a fleet that never resumed, a failure. */
export function failoverViolations(row: FailoverRow): string[] {
  const where = `${row.topology} run ${row.run}`;
  if (row.failure) return [`${where}: could not run: ${row.failure}`];
  const outcome = row.outcome;
  if (!outcome) return [`${where}: no outcome`];
  const info = TOPOLOGY_INFO[row.topology];
  return [
    ...outcome.crashes.map((c) => `${where}: unhandled error: ${c}`),
    ...outcome.tokenOrder.map((t) => `${where}: token order: ${t}`),
    ...(info.duplicates === 'none'
      ? outcome.duplicates.map((d) => `${where}: duplicate: ${d}`)
      : []),
    ...outcome.faults
      .map((f, i) =>
        f.resumeMs === null ? `${where}: claims never came back after fault ${i + 1}` : '',
      )
      .filter((line) => line !== ''),
  ];
}

/** Per topology (in {@link FAILOVER_TOPOLOGIES} order, those present in `rows`), its figures. */
export function summarizeFailover(rows: readonly FailoverRow[]): TopologySummary[] {
  const present = FAILOVER_TOPOLOGIES.filter((t) => rows.some((r) => r.topology === t));
  const summaries = present.map((topology): TopologySummary => {
    const mine = rows.filter((r) => r.topology === topology).sort((a, b) => a.run - b.run);
    const judged = mine.flatMap((r) => (r.outcome ? [r.outcome] : []));
    const resumeMs = judged.map((o) => o.faults[0]?.resumeMs ?? null);
    const resumed = resumeMs.filter((m): m is number => m !== null);
    const medianResumeMs =
      resumed.length > 0 && resumed.length === resumeMs.length ? median(resumed) : null;
    return {
      topology,
      runs: mine.length,
      duplicates: judged.map((o) => o.duplicates.length),
      tokenOrder: judged.map((o) => o.tokenOrder.length),
      resumeMs,
      lost: judged.map((o) => o.faults.reduce((n, f) => n + f.lost, 0)),
      missedBeforeFault: judged.map((o) => o.missedBeforeFault.length),
      medianResumeMs,
      boundRatio: ratio(medianResumeMs, TOPOLOGY_INFO[topology].resumeBoundMs),
      fastestRatio: null,
      failures: mine.flatMap((r) => (r.failure ? [`run ${r.run}: ${r.failure}`] : [])),
    };
  });
  const medians = summaries.flatMap((s) => (s.medianResumeMs === null ? [] : [s.medianResumeMs]));
  const fastest = medians.length > 0 ? Math.min(...medians) : null;
  return summaries.map((s) => ({ ...s, fastestRatio: ratio(s.medianResumeMs, fastest) }));
}

const list = (values: readonly (number | null)[]) =>
  values.length === 0 ? 'n/a' : values.map((v) => (v === null ? 'never' : int(v))).join(', ');

/** Markdown of the report: the side-by-side table, each topology's note, the violations. */
export function renderFailover(rows: readonly FailoverRow[], heading: string): string {
  const summaries = summarizeFailover(rows);
  const body = summaries.map((s) => {
    const info = TOPOLOGY_INFO[s.topology];
    return [
      `${info.label} (\`${s.topology}\`)`,
      `${list(s.duplicates)}${info.duplicates === 'measure' ? ' (measured)' : ''}`,
      list(s.tokenOrder),
      list(s.resumeMs),
      list(s.lost),
      s.resumeMs.length > 0 ? int(s.medianResumeMs) : 'n/a',
      info.resumeBoundMs === null
        ? 'none stated'
        : `${times(s.boundRatio)} of ${int(info.resumeBoundMs)} ms`,
      times(s.fastestRatio),
    ];
  });
  const violations = rows.flatMap(failoverViolations);
  const out = [
    `# ${heading}`,
    '',
    table(
      [
        'topology and fault',
        'duplicates, per run',
        'token-order violations',
        'claims back after (ms), per run',
        'fires lost, per run',
        'median back (ms)',
        'median ÷ stated bound',
        'median ÷ fastest',
      ],
      body,
      ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    ),
    '',
    'Lost counts fires of every job (job × fire time) due between the fault and the resume that did not run.',
    '',
    ...summaries.map((s) => {
      const missed = s.missedBeforeFault.some((n) => n > 0)
        ? `; fires missed before the fault: ${list(s.missedBeforeFault)}`
        : '';
      const failed = s.failures.length > 0 ? `; failed: ${s.failures.join('; ')}` : '';
      return `- \`${s.topology}\`: ${TOPOLOGY_INFO[s.topology].note}${missed}${failed}`;
    }),
    '',
    `Verdict: ${violations.length === 0 ? 'no violation (0 duplicates where the design closes them, token order kept, claims back after every fault)' : `${violations.length} violation(s)`}`,
    ...violations.map((v) => `- ${v}`),
  ];
  return out.join('\n');
}

/** One console line per run. */
export function failoverLine(row: FailoverRow): string {
  const head = `${row.topology} run ${row.run} (${(row.wallMs / 1000).toFixed(0)} s)`;
  if (row.failure) return `${head}: could not run: ${row.failure}`;
  const o = row.outcome;
  if (!o) return `${head}: no outcome`;
  const faults = o.faults
    .map((f) => `back after ${f.resumeMs === null ? 'never' : `${f.resumeMs} ms`}, lost ${f.lost}`)
    .join('; ');
  return `${head}: ${o.duplicates.length} duplicates, ${o.tokenOrder.length} token-order violations, ${faults}`;
}
