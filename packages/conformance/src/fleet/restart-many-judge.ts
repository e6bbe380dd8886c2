import type { Execution, Store } from '@fleetcron/core';
import { at } from './control-harness.js';
import type { LedgerEntry } from './ledger.js';

/** What a many-jobs restart left for judging (see `restart-many-scenarios.ts`). */
export interface RestartRun {
  /** Every ledger line of the scenario. */
  entries: LedgerEntry[];
  /** Names of the jobs every process defines. */
  jobs: string[];
  /** Instances of the fleet that was SIGKILLed (their claim lines bound each job's mark). */
  firstIds: string[];
  /** Instances of the fleet started again. */
  againIds: string[];
  /** The jobs' period, ms (they fire on its multiples). */
  everyMs: number;
  /** The lock's catch-up grace, ms (fires due within it before `start()` are not caught up). */
  graceMs: number;
  /** First regular fire after the restart that is judged (epoch ms). */
  from: number;
  /** Last one (epoch ms). */
  to: number;
  /** Wall time the first fleet was SIGKILLed. */
  killedAt: number;
  /** Wall time the restarted fleet was told to start. */
  goAt: number;
  /** The lock keeps a catch-up mark (`capabilities.durableMark` declared): missed fires are known. */
  hasMark: boolean;
}

/** What {@link judgeRestart} and {@link restartHistoryViolations} found. */
export interface RestartVerdict {
  /** One sentence per broken rule (empty: every rule holds). */
  violations: string[];
  /** Counts and timings, for the failure message and the report. */
  summary: string;
}

/** How many examples a violation lists. */
const EXAMPLES = 10;

const key = (job: string, fireAt: number) => `${job} ${fireAt}`;

/** The `q`-quantile of `values` (sorted here), `NaN` when empty. */
function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** The fires of a job on the grid with `lo < t <= hi`. */
function firesBetween(everyMs: number, lo: number, hi: number): number[] {
  const fires: number[] = [];
  for (let t = Math.floor(lo / everyMs) * everyMs + everyMs; t <= hi; t += everyMs) fires.push(t);
  return fires;
}

/**
 * Judges a many-jobs restart from its ledger. Rules:
 *
 * 1. No fire of any job starts twice (before or after the restart).
 * 2. Every job had a fire claimed by the first fleet, and missed at least one fire while the
 *    whole fleet was down: `(the newest fire the first fleet sent a claim of, goAt − grace]` is
 *    not empty. (A claim sent when the fleet was killed may or may not have been recorded: the
 *    mark is at most that fire, so every fire after it was missed.)
 * 3. No missed fire runs (the default catch-up policy, `'skip'`).
 * 4. Every regular fire of every job in `[from, to]` starts exactly once.
 */
export function judgeRestart(run: RestartRun): RestartVerdict {
  const { entries, jobs, everyMs, from, to, goAt, graceMs } = run;
  const first = new Set(run.firstIds);
  const again = new Set(run.againIds);
  const starts = new Map<string, LedgerEntry[]>();
  const lastClaimed = new Map<string, number>();
  const catchUpClaims: number[] = [];
  const lateness = new Map<number, number[]>();
  for (const e of entries) {
    if (e.job === undefined || e.fireAt === undefined) continue;
    if (e.kind === 'start') {
      const k = key(e.job, e.fireAt);
      starts.set(k, [...(starts.get(k) ?? []), e]);
      if (again.has(e.instance)) {
        lateness.set(e.fireAt, [...(lateness.get(e.fireAt) ?? []), e.wall - e.fireAt]);
      }
    } else if (e.kind === 'claim' && first.has(e.instance)) {
      lastClaimed.set(e.job, Math.max(lastClaimed.get(e.job) ?? 0, e.fireAt));
    } else if (e.kind === 'claim' && e.catchUp && again.has(e.instance)) {
      catchUpClaims.push(e.wall - goAt);
    }
  }
  const violations: string[] = [];
  const twice = [...starts].filter(([, s]) => s.length > 1);
  if (twice.length > 0) {
    violations.push(
      `${twice.length} fires started more than once, e.g. ${twice
        .slice(0, EXAMPLES)
        .map(
          ([k, s]) =>
            `${k.split(' ')[0]} ${at(s[0]!.fireAt)} on ${s.map((e) => e.instance).join(', ')}`,
        )
        .join('; ')}`,
    );
  }
  const bound = goAt - graceMs;
  const neverClaimed = jobs.filter((j) => !lastClaimed.has(j));
  if (neverClaimed.length > 0) {
    violations.push(
      `${neverClaimed.length} jobs had no claim sent before the kill, e.g. ${neverClaimed.slice(0, EXAMPLES).join(', ')}`,
    );
  }
  let missedTotal = 0;
  const noneMissed: string[] = [];
  const missedRan: string[] = [];
  for (const job of jobs) {
    const mark = lastClaimed.get(job);
    if (mark === undefined) continue;
    const missed = firesBetween(everyMs, mark, bound);
    missedTotal += missed.length;
    if (missed.length === 0) noneMissed.push(job);
    for (const t of missed) if (starts.has(key(job, t))) missedRan.push(`${job} ${at(t)}`);
  }
  if (noneMissed.length > 0) {
    violations.push(
      `${noneMissed.length} jobs missed no fire while the fleet was down (the scenario's setup), e.g. ${noneMissed.slice(0, EXAMPLES).join(', ')}`,
    );
  }
  if (missedRan.length > 0) {
    violations.push(
      `${missedRan.length} missed fires ran, though catchUp 'skip' (the default) runs none, e.g. ${missedRan.slice(0, EXAMPLES).join('; ')}`,
    );
  }
  const judged = firesBetween(everyMs, from - everyMs, to);
  const lost = new Map<number, string[]>();
  for (const t of judged) {
    for (const job of jobs) {
      if (!starts.has(key(job, t))) lost.set(t, [...(lost.get(t) ?? []), job]);
    }
  }
  const lostTotal = [...lost.values()].reduce((n, l) => n + l.length, 0);
  if (lostTotal > 0) {
    violations.push(
      `${lostTotal} of ${judged.length * jobs.length} fires after the restart never started (${[
        ...lost,
      ]
        .map(([t, l]) => `fire ${at(t)}: ${l.length}`)
        .join(', ')}); claims of the first ones: ${trails(entries, lost)}`,
    );
  }
  const late = judged
    .map((t) => {
      const l = lateness.get(t) ?? [];
      return `${at(t)} p50 ${Math.round(quantile(l, 0.5))} p99 ${Math.round(quantile(l, 0.99))} max ${Math.round(quantile(l, 1))}`;
    })
    .join('; ');
  const summary = [
    `jobs ${jobs.length}; first fleet killed at ${at(run.killedAt)}, restarted at ${at(goAt)} (catch-up bound ${at(bound)})`,
    `missed fires (newest claim sent before the kill, bound]: ${missedTotal}, of which ran: ${missedRan.length}`,
    `judged fires ${at(from)}..${at(to)}: ${judged.length} × ${jobs.length}, lost ${lostTotal}, started twice ${twice.length}`,
    `catch-up claims sent ${catchUpClaims.length}, from +${Math.round(quantile(catchUpClaims, 0))} to +${Math.round(quantile(catchUpClaims, 1))} ms after the restart; first judged fire at +${from - goAt} ms`,
    `start lateness after the restart (ms): ${late}`,
  ].join('\n');
  return { violations, summary };
}

/** The claim answers of the first lost fires (job, fire), for the failure message. */
function trails(entries: LedgerEntry[], lost: Map<number, string[]>): string {
  const wanted = new Set<string>();
  for (const [t, jobs] of lost) for (const job of jobs.slice(0, 3)) wanted.add(key(job, t));
  const trail = new Map<string, string[]>();
  for (const e of entries) {
    if (e.kind !== 'claimed' || e.job === undefined || e.fireAt === undefined) continue;
    const k = key(e.job, e.fireAt);
    if (wanted.has(k)) trail.set(k, [...(trail.get(k) ?? []), `${e.instance} ${e.status}`]);
  }
  return [...wanted]
    .slice(0, EXAMPLES)
    .map(
      (k) =>
        `${k.split(' ')[0]} ${at(Number(k.split(' ')[1]))}: ${(trail.get(k) ?? ['no claim answered']).join(', ')}`,
    )
    .join('; ');
}

/** Every execution of `job` in `store` (all pages). */
async function historyOf(store: Store, job: string): Promise<Execution[]> {
  const executions: Execution[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.history(job, { limit: 500, ...(cursor ? { cursor } : {}) });
    executions.push(...page.executions);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return executions;
}

/** How many jobs' histories are read at once. */
const HISTORY_CONCURRENCY = 16;

/**
 * Judges the history of a many-jobs restart, read through `store` after every process stopped:
 *
 * 1. Every regular fire of every job in `[from, to]` has exactly one row, `succeeded`: no run
 *    without a row, no later fire skipped (`overlap`, `backend_unavailable`, `lease_expired`, …).
 * 2. Every fire missed while the fleet was down has exactly one row, `skipped`/`missed` (none
 *    on a lock without a catch-up mark: the scheduler knows of no missed fire).
 * 3. No row of a fire after the kill is still `running`.
 */
export async function restartHistoryViolations(
  run: RestartRun,
  store: Store,
): Promise<RestartVerdict> {
  const { jobs, everyMs, from, to, goAt, graceMs, killedAt } = run;
  const lastClaimed = new Map<string, number>();
  const first = new Set(run.firstIds);
  for (const e of run.entries) {
    if (e.kind !== 'claim' || !first.has(e.instance) || e.job === undefined) continue;
    lastClaimed.set(e.job, Math.max(lastClaimed.get(e.job) ?? 0, e.fireAt ?? 0));
  }
  const judged = firesBetween(everyMs, from - everyMs, to);
  const wrong: string[] = [];
  const missedWrong: string[] = [];
  const running: string[] = [];
  const statuses = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const rows = await historyOf(store, job);
      const byFire = new Map<number, Execution[]>();
      for (const row of rows) byFire.set(row.fireAt, [...(byFire.get(row.fireAt) ?? []), row]);
      for (const t of judged) {
        const outcome = (byFire.get(t) ?? []).map(
          (r) => `${r.status}${r.reason ? `/${r.reason}` : ''}`,
        );
        const text = outcome.join(', ') || 'no row';
        statuses.set(text, (statuses.get(text) ?? 0) + 1);
        if (text !== 'succeeded') wrong.push(`${job} ${at(t)}: ${text}`);
      }
      const mark = lastClaimed.get(job);
      if (mark !== undefined) {
        for (const t of firesBetween(everyMs, mark, goAt - graceMs)) {
          const outcome = (byFire.get(t) ?? []).map((r) => `${r.status}/${r.reason ?? ''}`);
          if (outcome.join(', ') !== (run.hasMark ? 'skipped/missed' : '')) {
            missedWrong.push(`${job} ${at(t)}: ${outcome.join(', ') || 'no row'}`);
          }
        }
      }
      for (const row of rows) {
        if (row.status === 'running' && row.fireAt > killedAt) {
          running.push(`${job} ${at(row.fireAt)} on ${row.instanceId}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: HISTORY_CONCURRENCY }, worker));
  const violations: string[] = [];
  if (wrong.length > 0) {
    violations.push(
      `${wrong.length} of ${judged.length * jobs.length} fires after the restart have no single succeeded row, e.g. ${wrong.slice(0, EXAMPLES).join('; ')}`,
    );
  }
  if (missedWrong.length > 0) {
    violations.push(
      `${missedWrong.length} missed fires are not recorded skipped/missed exactly once, e.g. ${missedWrong.slice(0, EXAMPLES).join('; ')}`,
    );
  }
  if (running.length > 0) {
    violations.push(
      `${running.length} rows of fires after the kill are still running after stop(), e.g. ${running.slice(0, EXAMPLES).join('; ')}`,
    );
  }
  const summary = `history of the judged fires: ${[...statuses]
    .map(([s, n]) => `${s} ${n}`)
    .join(', ')}; missed fires not recorded skipped/missed once: ${missedWrong.length}`;
  return { violations, summary };
}
