import type { ResolvedRetention, RetentionReport } from './retention-options.js';

/** Where a walk starts and what it may delete. */
export interface WalkInput {
  /** The job to start with (the previous run's `resumeAt`), or `null` for the first by name. */
  resumeAt: string | null;
  /** Executions that started before this may go (`now - maxAgeMs`), or `null`. */
  before: number | null;
  /** Aborted: stop after the current call. */
  signal: AbortSignal;
}

/**
 * One pass of the retention job: lists the jobs, then, from `resumeAt` in name order (wrapping
 * around once), prunes each with `pruneJob` calls of at most `rowsPerCall` until it has no more
 * to delete, the run's `rowsPerRun` is used up, or `signal` aborts. A job whose call deleted a
 * full `limit` may have more: the budget or signal leaves `resumeAt` on it.
 */
export async function walkRetention(
  retention: ResolvedRetention,
  input: WalkInput,
): Promise<RetentionReport> {
  const { store, keepLast, rowsPerRun, rowsPerCall } = retention;
  const { before, signal } = input;
  const names = (await store.listJobs()).map((s) => s.job).sort(byName);
  const start =
    input.resumeAt === null ? 0 : names.findIndex((n) => byName(n, input.resumeAt!) >= 0);
  const order = start <= 0 ? names : [...names.slice(start), ...names.slice(0, start)];
  const report: RetentionReport = {
    deleted: 0,
    jobsVisited: 0,
    jobsListed: names.length,
    deletedByJob: {},
    stoppedBy: 'done',
    resumeAt: null,
    before,
    keepLast,
  };
  for (const job of order) {
    if (signal.aborted) return stop(report, 'signal', job);
    report.jobsVisited++;
    for (;;) {
      const limit = Math.min(rowsPerCall, rowsPerRun - report.deleted);
      const deleted = await store.pruneJob(job, {
        ...(keepLast === null ? {} : { keepLast }),
        ...(before === null ? {} : { before }),
        limit,
      });
      if (deleted > 0) {
        report.deleted += deleted;
        report.deletedByJob[job] = (report.deletedByJob[job] ?? 0) + deleted;
      }
      if (deleted < limit) break; // nothing more to delete in this job now
      if (report.deleted >= rowsPerRun) return stop(report, 'budget', job);
      if (signal.aborted) return stop(report, 'signal', job);
    }
  }
  return report;
}

function stop(
  report: RetentionReport,
  stoppedBy: RetentionReport['stoppedBy'],
  resumeAt: string,
): RetentionReport {
  return { ...report, stoppedBy, resumeAt };
}

/** Code-unit order, the same on every instance (never the locale's). */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
