import { table } from '../report/markdown.js';
import type { SkewRow } from './run.js';

/**
 * Backends whose lock judges `early` by the backend's clock: read (PostgreSQL, Redis, SQLite) or
 * estimated to a few ms from the etcd host's HTTP `Date` header (lock-etcd's `etcdClock`).
 */
const BACKEND_CLOCK = new Set(['postgres', 'redis', 'sqlite', 'etcd']);

/** The default early tolerance of the locks, ms: a run may start this much before its time. */
export const EARLY_TOLERANCE_MS = 250;

const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '–');

/**
 * Violations of the skew scenario: a failed fire, a duplicate or missed job, and (backend-clock
 * locks only) a run that started more than the tolerance before its time on the real clock.
 */
export function skewViolations(rows: readonly SkewRow[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const at = `skew ${r.backend} ${r.mode}`;
    if (r.failure) {
      out.push(`${at}: did not run: ${r.failure}`);
      continue;
    }
    if (r.duplicates > 0) out.push(`${at}: ${r.duplicates} duplicate runs`);
    if (r.missed > 0) out.push(`${at}: ${r.missed} jobs never ran`);
    // etcd's estimate can fall back to the instance's own clock (its HTTP endpoint unreachable):
    // then it is reported, not judged
    const judged =
      BACKEND_CLOCK.has(r.backend) &&
      (r.backend !== 'etcd' || r.instances.every((i) => i.estimate !== null));
    if (judged && r.lateness.min < -EARLY_TOLERANCE_MS) {
      out.push(`${at}: a run started ${ms(-r.lateness.min)} ms before its time (real clock)`);
    }
  }
  return out;
}

/** The skew table: one row per backend and mode, lateness on the real clock. */
export function skewTable(rows: readonly SkewRow[]): string {
  const estimates = (r: SkewRow) =>
    r.instances
      .map((i) => {
        const e = i.estimate ? `${i.estimate.offsetMs} ± ${i.estimate.boundMs.toFixed(1)}` : 'none';
        return `${i.skewMs >= 0 ? '+' : ''}${i.skewMs}: ${e} (${i.runs} runs, ${i.early} early)`;
      })
      .join('; ');
  return table(
    [
      'backend',
      'clocks',
      'jobs',
      'ran',
      'dup',
      'missed',
      'min ms',
      'p50 ms',
      'p99 ms',
      'max ms',
      'instance skew: estimated offset ms',
    ],
    rows.map((r) =>
      r.failure
        ? [r.backend, r.mode, String(r.jobs), 'failed', '', '', '', '', '', '', r.failure]
        : [
            ...[r.backend, r.mode, String(r.jobs), String(r.ran), String(r.duplicates)],
            ...[String(r.missed), ms(r.lateness.min), ms(r.lateness.p50), ms(r.lateness.p99)],
            ...[ms(r.lateness.max), estimates(r)],
          ],
    ),
  );
}

/** The markdown section of the skew scenario. */
export function skewSection(rows: readonly SkewRow[]): string {
  return [
    '## Clock skew: 4 instance processes, one +3 s and one −2 s (libfaketime)',
    '',
    'All jobs `at()` the same instant; each instance also runs a job of its own every second (its ' +
      "claims keep the estimate of the backend's clock fresh, as in a running fleet). Lateness is run " +
      'start − scheduled time on the REAL clock (negative: early). `unskewed` is the same fire with every ' +
      `clock exact. Goal: min ≥ −${EARLY_TOLERANCE_MS} ms (the early tolerance) and p99 close to unskewed. ` +
      "etcd reports no time in its answers: its lock estimates the etcd host's clock from the `Date` " +
      "header of the server's HTTP endpoint (see lock-etcd's README, 'The fleet's clock').",
    '',
    rows.length ? skewTable(rows) : '_not run_',
    '',
  ].join('\n');
}
