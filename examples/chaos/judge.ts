import type { FaultWindow } from './faults.js';
import type { ChaosJob } from './jobs.js';
import type { LedgerLine } from './ledger.js';

/** What the judge needs besides the ledger. */
export interface JudgeInput {
  lines: readonly LedgerLine[];
  jobs: readonly ChaosJob[];
  leaseMs: number;
  faults: readonly FaultWindow[];
  /** Real epoch ms minus monotonic ms (the driver's unfaked clock), to place fire times. */
  epochMinusMono: number;
  /** Fires with a time (real epoch) in [from, to] are counted for missed fires. */
  countFrom: number;
  countTo: number;
  /** Statuses from the Store's history by `job|fireAt|token`, when the backend has a Store. */
  storeStatuses?: ReadonlyMap<string, string>;
}

/** The ledger's verdict. Each list holds one readable line per violation. */
export interface Verdict {
  runs: number;
  /** (1) fires started more than once across the fleet. */
  duplicates: string[];
  /** (2) exclusive jobs whose tokens did not increase in real start order. */
  tokenOrder: string[];
  /** (3a) runs started after the lease deadline of their claim or last renewal. */
  startedAfterDeadline: string[];
  /** (3b) runs whose job ended after the lease deadline and were recorded `succeeded`. */
  succeededAfterDeadline: string[];
  /** (4) fires outside fault windows that neither ran nor were skipped by policy. */
  missedOutside: string[];
  expectedOutside: number;
  /** Fires inside fault windows that did not run (reported, not judged). */
  missedInside: number;
  /** Statuses recorded for runs (ledger `finished`, or the Store where there is one). */
  statuses: Record<string, number>;
  /** Instances whose wall clock was not skewed as asked (libfaketime not applied). */
  skewErrors: string[];
  /** `crash` lines (unhandled errors in an instance). */
  crashes: string[];
}

const fireKey = (l: { job?: string; fireAt?: number }) => `${l.job}|${l.fireAt}`;
const runKey = (l: { job?: string; fireAt?: number; token?: number }) =>
  `${l.job}|${l.fireAt}|${l.token}`;
const iso = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/**
 * Lease deadlines each run's holder had, by `instance|job|fireAt|token`: the monotonic time at
 * which the claim (or a renewal) was answered plus the lease. The backend's expiry is earlier
 * (it started counting when it received the request), so a run past this deadline is certainly
 * past its lease; a freeze between the answer and the ledger line only makes the bound looser.
 */
function deadlinesOf(lines: readonly LedgerLine[], leaseMs: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const l of lines) {
    if (l.kind !== 'won' && l.kind !== 'renewed') continue;
    const key = `${l.instance}|${runKey(l)}`;
    out.set(key, [...(out.get(key) ?? []), l.mono + leaseMs]);
  }
  return out;
}

/** The latest deadline set at or before `mono`, or undefined. */
function deadlineAt(deadlines: readonly number[] | undefined, leaseMs: number, mono: number) {
  const set = (deadlines ?? []).filter((d) => d - leaseMs <= mono);
  return set.length === 0 ? undefined : Math.max(...set);
}

function checkDuplicates(starts: readonly LedgerLine[]): string[] {
  const byFire = new Map<string, LedgerLine[]>();
  for (const s of starts) byFire.set(fireKey(s), [...(byFire.get(fireKey(s)) ?? []), s]);
  return [...byFire.values()]
    .filter((runs) => runs.length > 1)
    .map(
      (runs) =>
        `${runs[0]?.job} fire ${iso(runs[0]?.fireAt ?? 0)} started ${runs.length}x: ${runs.map((r) => `${r.instance} token ${r.token}`).join(', ')}`,
    );
}

function checkTokenOrder(starts: readonly LedgerLine[], jobs: readonly ChaosJob[]): string[] {
  const out: string[] = [];
  for (const job of jobs.filter((j) => j.overlap === 'skip')) {
    const runs = starts.filter((s) => s.job === job.name); // already in monotonic order
    for (let i = 1; i < runs.length; i++) {
      const [prev, cur] = [runs[i - 1] as LedgerLine, runs[i] as LedgerLine];
      if ((cur.token ?? 0) <= (prev.token ?? 0)) {
        out.push(
          `${job.name}: ${cur.instance} started token ${cur.token} (fire ${iso(cur.fireAt ?? 0)}) ${(cur.mono - prev.mono).toFixed(0)} ms after ${prev.instance} started token ${prev.token}`,
        );
      }
    }
  }
  return out;
}

function checkDeadlines(input: JudgeInput, starts: readonly LedgerLine[]) {
  const { lines, leaseMs } = input;
  const deadlines = deadlinesOf(lines, leaseMs);
  const finished = new Map<string, string>();
  for (const l of lines) if (l.kind === 'finished') finished.set(runKey(l), l.status ?? '?');
  const statusOf = (l: LedgerLine) =>
    input.storeStatuses?.get(runKey(l)) ?? finished.get(runKey(l));
  const startedAfter: string[] = [];
  for (const s of starts) {
    const d = deadlineAt(deadlines.get(`${s.instance}|${runKey(s)}`), leaseMs, s.mono);
    const believed = s.believedDeadline;
    if (d === undefined) startedAfter.push(`${s.job} token ${s.token}: started with no claim line`);
    else if (s.mono > d || (believed !== undefined && s.mono > believed)) {
      startedAfter.push(
        `${s.job} fire ${iso(s.fireAt ?? 0)} token ${s.token} on ${s.instance}: started ${(s.mono - Math.min(d, believed ?? d)).toFixed(0)} ms past its lease deadline (status ${statusOf(s) ?? 'none'})`,
      );
    }
  }
  const succeededAfter: string[] = [];
  for (const e of lines.filter((l) => l.kind === 'end')) {
    const d = deadlineAt(deadlines.get(`${e.instance}|${runKey(e)}`), leaseMs, e.mono);
    if (d !== undefined && e.mono > d && statusOf(e) === 'succeeded') {
      succeededAfter.push(
        `${e.job} fire ${iso(e.fireAt ?? 0)} token ${e.token} on ${e.instance}: ended ${(e.mono - d).toFixed(0)} ms past its lease deadline and was recorded succeeded`,
      );
    }
  }
  const statuses: Record<string, number> = {};
  for (const s of starts) {
    const status = statusOf(s) ?? 'none (process killed)';
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return { startedAfter, succeededAfter, statuses };
}

/** True when fire `fireAt` (real epoch) could have been claimed while a fault was on. */
function insideFault(input: JudgeInput, fireAt: number): boolean {
  const claimFrom = fireAt - 3_000; // the +3 s instance claims 3 s early
  const claimTo = fireAt + 2_000; // the −2 s instance claims 2 s late
  return input.faults.some((f) => {
    const from = f.from + input.epochMinusMono - 500;
    const to = f.to + input.epochMinusMono + input.leaseMs + 2_000; // held leases, reconnects
    return claimTo >= from && claimFrom <= to;
  });
}

function checkMissed(input: JudgeInput, starts: readonly LedgerLine[]) {
  const ran = new Set(starts.map(fireKey));
  const byPolicy = new Set(
    input.lines
      .filter((l) => l.kind === 'skipped' && (l.reason === 'overlap' || l.reason === 'paused'))
      .map(fireKey),
  );
  const missedOutside: string[] = [];
  let expectedOutside = 0;
  let missedInside = 0;
  for (const job of input.jobs) {
    let next = job.trigger.next(new Date(input.countFrom - 1));
    while (next && next.getTime() <= input.countTo) {
      const t = next.getTime();
      const key = `${job.name}|${t}`;
      const done = ran.has(key) || byPolicy.has(key);
      if (insideFault(input, t)) missedInside += done ? 0 : 1;
      else {
        expectedOutside++;
        if (!done) missedOutside.push(`${job.name} fire ${iso(t)}`);
      }
      next = job.trigger.next(next);
    }
  }
  return { missedOutside, expectedOutside, missedInside };
}

function checkSkew(input: JudgeInput): string[] {
  return input.lines
    .filter((l) => l.kind === 'boot')
    .filter((l) => Math.abs(l.wall - (l.mono + input.epochMinusMono) - (l.skewMs ?? 0)) > 500)
    .map(
      (l) =>
        `${l.instance}: wall clock off by ${(l.wall - (l.mono + input.epochMinusMono)).toFixed(0)} ms, expected ${l.skewMs}`,
    );
}

/**
 * Judges a chaos run from its ledger alone (plus the Store's statuses where there is one):
 * (1) no fire started twice; (2) tokens of an exclusive job's runs increase in real start
 * order; (3) no run started past its lease deadline, and none that ended past it is recorded
 * succeeded; (4) fires outside fault windows ran or were skipped by policy.
 */
export function judge(input: JudgeInput): Verdict {
  const starts = input.lines.filter((l) => l.kind === 'start');
  const deadlines = checkDeadlines(input, starts);
  const missed = checkMissed(input, starts);
  return {
    runs: starts.length,
    duplicates: checkDuplicates(starts),
    tokenOrder: checkTokenOrder(starts, input.jobs),
    startedAfterDeadline: deadlines.startedAfter,
    succeededAfterDeadline: deadlines.succeededAfter,
    ...missed,
    statuses: deadlines.statuses,
    skewErrors: checkSkew(input),
    crashes: input.lines.filter((l) => l.kind === 'crash').map((l) => `${l.instance}: ${l.error}`),
  };
}

/** Most fires outside fault windows that may go missing on a loaded machine: 2 %, at least 2. */
export function missedAllowance(expectedOutside: number): number {
  return Math.max(2, Math.floor(expectedOutside * 0.02));
}

/** One summary line of a verdict. */
export function summaryLine(backend: string, v: Verdict): string {
  const statuses = Object.entries(v.statuses)
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
  return `${backend}: ${v.runs} runs (${statuses}); duplicates ${v.duplicates.length}, token order ${v.tokenOrder.length}, started after lease ${v.startedAfterDeadline.length}, succeeded after lease ${v.succeededAfterDeadline.length}, missed ${v.missedOutside.length}/${v.expectedOutside} outside faults (${v.missedInside} inside), crashes ${v.crashes.length}`;
}
