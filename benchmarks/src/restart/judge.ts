/**
 * The judge of the restart scenario (issue #25): given the runs the instances appended to their
 * ledgers, counts per fire time runs, lost fires, duplicates and lateness, and what became of the
 * fires missed while the whole fleet was down. Pure: it reads the ledger, never a scheduler's
 * counters.
 */
import type { CatchUpPolicy } from '@fleetcron/core';
import { type Summary, summarize } from '../stats.js';

/** One run, as an instance appends it to its ledger. */
export interface RestartLedgerLine {
  /** Job index (`0 .. jobs-1`). */
  job: number;
  /** Scheduled fire time, epoch ms. */
  fireAt: number;
  /** Index of the instance that ran it. */
  instance: number;
  /** When the run started by the instance's wall clock, epoch ms. */
  startedAt: number;
}

/** When each fire time falls relative to the outage. */
export type FirePhase = 'before' | 'missed' | 'after';

/** The fire times to judge. */
export interface RestartTimeline {
  /** Jobs of the fleet; every job fires at every fire time. */
  jobs: number;
  /** Fire times while the first fleet ran (each job must run once). */
  before: readonly number[];
  /** Fire times while the whole fleet was down (the catch-up policy decides them). */
  missed: readonly number[];
  /** The fire times observed after the restart (each job must run once). */
  after: readonly number[];
}

/** The verdict on one fire time. */
export interface FireVerdict {
  fireAt: number;
  phase: FirePhase;
  /** Runs in the ledger (duplicates included). */
  runs: number;
  /** Jobs that ran at least once. */
  ran: number;
  /** Jobs with no run. For `missed` fires this is what the policy skipped, not a fault. */
  lost: number;
  /** Runs beyond the first of a (job, fire). */
  duplicates: number;
  /** `startedAt − fireAt` of every run, ms. */
  lateness: Summary;
}

/** The verdict on the whole timeline. */
export interface RestartVerdict {
  fires: FireVerdict[];
  /** Runs whose fire time is not on the timeline, or whose job is out of range. */
  stray: number;
}

/** Judges `lines` against `timeline`; see {@link RestartVerdict}. */
export function judgeRestart(
  timeline: RestartTimeline,
  lines: readonly RestartLedgerLine[],
): RestartVerdict {
  const phases = new Map<number, FirePhase>();
  for (const phase of ['before', 'missed', 'after'] as const) {
    for (const fireAt of timeline[phase]) phases.set(fireAt, phase);
  }
  const counts = new Map<number, Uint32Array>();
  const lateness = new Map<number, number[]>();
  for (const fireAt of phases.keys()) {
    counts.set(fireAt, new Uint32Array(timeline.jobs));
    lateness.set(fireAt, []);
  }
  let stray = 0;
  for (const line of lines) {
    const count = counts.get(line.fireAt);
    if (!count || !Number.isInteger(line.job) || line.job < 0 || line.job >= timeline.jobs) {
      stray++;
      continue;
    }
    count[line.job] = (count[line.job] as number) + 1;
    lateness.get(line.fireAt)?.push(line.startedAt - line.fireAt);
  }
  const fires = [...phases.entries()]
    .sort(([a], [b]) => a - b)
    .map(([fireAt, phase]): FireVerdict => {
      const count = counts.get(fireAt) as Uint32Array;
      let ran = 0;
      let runs = 0;
      let duplicates = 0;
      for (const n of count) {
        runs += n;
        if (n > 0) ran++;
        if (n > 1) duplicates += n - 1;
      }
      return {
        fireAt,
        phase,
        runs,
        ran,
        lost: timeline.jobs - ran,
        duplicates,
        lateness: summarize(lateness.get(fireAt) ?? []),
      };
    });
  return { fires, stray };
}

/** Whether a parsed ledger line has the fields of a {@link RestartLedgerLine}. */
export function isRestartLine(line: unknown): line is RestartLedgerLine {
  const l = line as RestartLedgerLine;
  return (
    Number.isInteger(l.job) &&
    Number.isFinite(l.fireAt) &&
    Number.isInteger(l.instance) &&
    Number.isFinite(l.startedAt)
  );
}

/**
 * What the catch-up policy owes each of the `missed` fires (oldest first) of an exclusive job
 * when the fleet comes back: `true` where every job must run it once, `false` where it must
 * not run (`'skip'`: none; `'latest'`: the newest; `{ max: n }`: the newest n).
 */
export function owedByCatchUp(policy: CatchUpPolicy, missed: readonly number[]): boolean[] {
  const owed = policy === 'skip' ? 0 : policy === 'latest' ? 1 : policy.max;
  return missed.map((_, i) => i >= missed.length - owed);
}

/**
 * The fires of `verdict` that break the guarantees, as sentences: a duplicate anywhere, a fire
 * before the outage or after the restart that some job did not run, a missed fire run other than
 * as `policy` owes it.
 */
export function restartViolations(verdict: RestartVerdict, policy: CatchUpPolicy): string[] {
  const missed = verdict.fires.filter((f) => f.phase === 'missed');
  const owed = owedByCatchUp(
    policy,
    missed.map((f) => f.fireAt),
  );
  const out: string[] = [];
  for (const fire of verdict.fires) {
    const at = new Date(fire.fireAt).toISOString().slice(11, 19);
    if (fire.duplicates > 0) out.push(`${at} (${fire.phase}): ${fire.duplicates} duplicate runs`);
    if (fire.phase !== 'missed' && fire.lost > 0) {
      out.push(`${at} (${fire.phase}): ${fire.lost} of ${fire.ran + fire.lost} jobs did not run`);
    }
  }
  missed.forEach((fire, i) => {
    const at = new Date(fire.fireAt).toISOString().slice(11, 19);
    const total = fire.ran + fire.lost;
    if (owed[i] && fire.lost > 0) {
      out.push(`${at} (missed, owed by catch-up): ${fire.lost} of ${total} jobs did not run`);
    }
    if (!owed[i] && fire.ran > 0) {
      out.push(`${at} (missed, not owed by catch-up): ${fire.ran} of ${total} jobs ran`);
    }
  });
  if (verdict.stray > 0) out.push(`${verdict.stray} runs of fire times off the timeline`);
  return out;
}
