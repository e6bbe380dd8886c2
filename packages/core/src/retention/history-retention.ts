import { publish } from '../events.js';
import type { JobDefinition } from '../scheduler/job/index.js';
import {
  type HistoryRetentionOptions,
  type RetentionReport,
  resolveRetention,
} from './retention-options.js';
import { walkRetention } from './retention-walk.js';

/**
 * A job that keeps every job's history bounded: add it like any job (`scheduler.add(...)`) and
 * it runs once fleet-wide per fire through the normal claim. Each run walks `store.listJobs()`
 * and deletes, per job, the executions beyond its newest `keepLast` or older than `maxAgeMs`
 * (never one still running), at most `rowsPerRun` in all, in `pruneJob` calls of at most
 * `rowsPerCall`; a run stopped by its budget or its signal resumes at the same job next time on
 * this instance. Each run publishes a `history.pruned` event, logs a summary and calls
 * `onReport`. Options are checked here (`InvalidOptionError` naming the field).
 *
 * @example
 * scheduler.add(historyRetention({ store, keepLast: 1000, maxAgeMs: 30 * 86_400_000 }));
 */
export function historyRetention(options: HistoryRetentionOptions): JobDefinition {
  const retention = resolveRetention(options);
  let resumeAt: string | null = null;
  return {
    name: retention.name,
    trigger: retention.trigger,
    overlap: 'skip',
    async run(ctx) {
      const now = ctx.clock.now();
      const before = retention.maxAgeMs === null ? null : now - retention.maxAgeMs;
      const report = await walkRetention(retention, { resumeAt, before, signal: ctx.signal });
      resumeAt = report.resumeAt;
      publishReport(ctx.instanceId, ctx.job, ctx.fireAt.getTime(), ctx.clock.now(), report);
      ctx.log.info('history retention run', {
        deleted: report.deleted,
        jobsVisited: report.jobsVisited,
        jobsListed: report.jobsListed,
        stoppedBy: report.stoppedBy,
        resumeAt: report.resumeAt,
      });
      retention.onReport?.(report);
    },
  };
}

function publishReport(
  instanceId: string,
  job: string,
  fireAt: number,
  at: number,
  report: RetentionReport,
): void {
  publish({
    type: 'history.pruned',
    instanceId,
    job,
    fireAt,
    at,
    deleted: report.deleted,
    jobsVisited: report.jobsVisited,
    stoppedBy: report.stoppedBy,
  });
}
