/** One run that started, as the job itself appended it to the failover ledger. */
export interface FailoverRun {
  job: string;
  /** The fire's scheduled time, epoch ms. */
  fireAt: number;
  instanceId: string;
  /** The lease's fencing token. */
  token: number;
  /** When the job's function was entered, epoch ms. */
  startedAt: number;
}

/** What {@link judgeFailover} judges: an append-only ledger of runs and the scenario's times. */
export interface FailoverJudgement {
  runs: readonly FailoverRun[];
  /** Every job of the scenario (each due every `periodMs`, on the whole period). */
  jobs: readonly string[];
  periodMs: number;
  /** First fire time judged (every job must run each fire from it until the first fault). */
  firstFireAt: number;
  /** When each fault was injected, epoch ms, in order. */
  faultsAt: readonly number[];
  /** Last fire time judged. */
  lastFireAt: number;
}

/** Figures of one fault. */
export interface FaultFigures {
  /** When it was injected, epoch ms. */
  at: number;
  /**
   * ms from the fault to the first fire from which every job ran every fire until the next fault
   * (or the end): the time until claims succeed again, at the period's resolution. `null` when
   * they never did.
   */
  resumeMs: number | null;
  /** ms from the fault to the first start of a run of a fire scheduled after it. */
  firstRunMs: number | null;
  /** Fires (job × fire time) due from the fault until the resume that did not run. */
  lost: number;
}

/** What {@link judgeFailover} found: safety violations (lists) and figures. */
export interface FailoverReport {
  /** Fires judged (jobs × fire times in the window). */
  fires: number;
  /** Runs in the ledger. */
  runs: number;
  /** One line per fire that ran more than once. */
  duplicates: string[];
  /** One line per job whose tokens did not increase with its fire times. */
  tokenOrder: string[];
  /** One line per fire before the first fault that did not run (the fleet was not working). */
  missedBeforeFault: string[];
  faults: FaultFigures[];
}

const iso = (t: number) => new Date(t).toISOString();

/**
 * Judges a failover run from its append-only ledger: no fire ran twice, every job's fencing
 * tokens increase with its fire times across the failover, every fire before the first fault
 * ran, and per fault how long until every job's fires ran again and how many were lost meanwhile.
 */
export function judgeFailover(judgement: FailoverJudgement): FailoverReport {
  const { runs, jobs, periodMs, firstFireAt, faultsAt, lastFireAt } = judgement;
  const byFire = new Map<string, FailoverRun[]>();
  for (const run of runs) {
    const id = `${run.job}@${run.fireAt}`;
    byFire.set(id, [...(byFire.get(id) ?? []), run]);
  }
  const ran = (job: string, fireAt: number) => (byFire.get(`${job}@${fireAt}`)?.length ?? 0) > 0;
  const duplicates = [...byFire.values()]
    .filter((list) => list.length > 1)
    .map(
      (list) =>
        `${list[0]?.job} fire ${iso(list[0]?.fireAt ?? 0)} ran ${list.length} times: ${list
          .map((r) => `${r.instanceId} token ${r.token}`)
          .join(', ')}`,
    );
  const tokenOrder: string[] = [];
  for (const job of jobs) {
    const ordered = runs.filter((r) => r.job === job).sort((a, b) => a.fireAt - b.fireAt);
    for (let i = 1; i < ordered.length; i++) {
      const before = ordered[i - 1] as FailoverRun;
      const after = ordered[i] as FailoverRun;
      if (after.fireAt !== before.fireAt && after.token <= before.token) {
        tokenOrder.push(
          `${job}: fire ${iso(after.fireAt)} token ${after.token} (${after.instanceId}) not above fire ${iso(before.fireAt)} token ${before.token} (${before.instanceId})`,
        );
      }
    }
  }
  const fireTimes: number[] = [];
  for (let t = firstFireAt; t <= lastFireAt; t += periodMs) fireTimes.push(t);
  const firstFault = faultsAt[0] ?? Number.POSITIVE_INFINITY;
  const missedBeforeFault: string[] = [];
  for (const t of fireTimes.filter((t) => t < firstFault - periodMs)) {
    for (const job of jobs) if (!ran(job, t)) missedBeforeFault.push(`${job} fire ${iso(t)}`);
  }
  const faults = faultsAt.map((at, k): FaultFigures => {
    const until = faultsAt[k + 1] ?? lastFireAt + 1;
    const window = fireTimes.filter((t) => t >= at && t < until);
    // The first fire time from which every job ran every fire until the window's end.
    let resumeAt: number | null = null;
    for (let i = window.length - 1; i >= 0; i--) {
      const t = window[i] as number;
      if (!jobs.every((job) => ran(job, t))) break;
      resumeAt = t;
    }
    const lost = window
      .filter((t) => resumeAt === null || t < resumeAt)
      .reduce((n, t) => n + jobs.filter((job) => !ran(job, t)).length, 0);
    const starts = runs.filter((r) => r.fireAt >= at).map((r) => r.startedAt);
    return {
      at,
      resumeMs: resumeAt === null ? null : resumeAt - at,
      firstRunMs: starts.length > 0 ? Math.min(...starts) - at : null,
      lost,
    };
  });
  return {
    fires: fireTimes.length * jobs.length,
    runs: runs.length,
    duplicates,
    tokenOrder,
    missedBeforeFault,
    faults,
  };
}
