/**
 * Duplicate and missed-fire accounting: every fire that any instance claimed must have exactly
 * one winner. Pure functions over what the instances reported.
 */

/** What one group of instances (a worker process) reported for a run of fires `0..steps-1`. */
export interface FireReport {
  /** Fires `0 .. steps-1` were claimed by every instance of the group. */
  steps: number;
  /** Fire indices this group won, once per win (a fire won twice appears twice). */
  wins: ArrayLike<number>;
  /** Fire indices for which a claim of this group threw (backend unavailable, timeout). */
  errors: ArrayLike<number>;
}

/** The verdict over all groups. */
export interface FireAccount {
  /** Distinct fires claimed by at least one instance. */
  fires: number;
  /** Fires with exactly one winner. */
  exactlyOnce: number;
  /** Extra wins: for each fire, winners beyond the first (0 when every fire ran once). */
  duplicates: number;
  /** Fires nobody won although no claim of them failed: a lock bug. */
  missed: number;
  /** Fires nobody won because a claim failed (the backend did not answer in time). */
  unresolved: number;
  /** Up to 10 fire indices with duplicates, then missed, for the error message. */
  examples: { duplicate: number[]; missed: number[] };
}

/** Counts winners per fire over every group's report; see {@link FireAccount}. */
export function accountFires(reports: readonly FireReport[]): FireAccount {
  const fires = reports.reduce((max, r) => Math.max(max, r.steps), 0);
  const winners = new Uint32Array(fires);
  const errored = new Uint8Array(fires);
  for (const report of reports) {
    for (let i = 0; i < report.wins.length; i++) {
      const fire = report.wins[i] as number;
      if (!Number.isInteger(fire) || fire < 0 || fire >= report.steps) {
        throw new RangeError(`win of fire ${fire} outside the ${report.steps} fires claimed`);
      }
      winners[fire] = (winners[fire] as number) + 1;
    }
    for (let i = 0; i < report.errors.length; i++) {
      const fire = report.errors[i] as number;
      if (fire >= 0 && fire < fires) errored[fire] = 1;
    }
  }
  const account: FireAccount = {
    fires,
    exactlyOnce: 0,
    duplicates: 0,
    missed: 0,
    unresolved: 0,
    examples: { duplicate: [], missed: [] },
  };
  for (let fire = 0; fire < fires; fire++) {
    const n = winners[fire] as number;
    if (n === 1) account.exactlyOnce++;
    else if (n > 1) {
      account.duplicates += n - 1;
      if (account.examples.duplicate.length < 10) account.examples.duplicate.push(fire);
    } else if (errored[fire]) account.unresolved++;
    else {
      account.missed++;
      if (account.examples.missed.length < 10) account.examples.missed.push(fire);
    }
  }
  return account;
}

/** One recorded run of a scheduled job (scheduler scenario). */
export interface RunRecord {
  job: number;
  instance: number;
}

/** Duplicates and missed jobs when each of `jobs` jobs was due once. */
export interface JobAccount {
  jobs: number;
  ran: number;
  duplicates: number;
  /** Jobs that never ran and whose claims all answered (a lock or scheduler bug). */
  missed: number;
  /** Jobs that never ran because at least one claim of them failed (skipped, fail closed). */
  skippedUnavailable: number;
}

/**
 * Accounts runs of `jobs` one-shot jobs: each must run exactly once. `failedJobs` lists jobs for
 * which some instance's claim threw: when such a job did not run, it was skipped by design
 * (fail closed) rather than missed.
 */
export function accountJobs(
  jobs: number,
  runs: readonly RunRecord[],
  failedJobs: Iterable<number> = [],
): JobAccount {
  const count = new Uint32Array(jobs);
  for (const run of runs) {
    if (run.job < 0 || run.job >= jobs) throw new RangeError(`run of unknown job ${run.job}`);
    count[run.job] = (count[run.job] as number) + 1;
  }
  const failed = new Set(failedJobs);
  const account: JobAccount = { jobs, ran: 0, duplicates: 0, missed: 0, skippedUnavailable: 0 };
  for (let job = 0; job < jobs; job++) {
    const n = count[job] as number;
    if (n >= 1) account.ran++;
    if (n > 1) account.duplicates += n - 1;
    if (n === 0) {
      if (failed.has(job)) account.skippedUnavailable++;
      else account.missed++;
    }
  }
  return account;
}
