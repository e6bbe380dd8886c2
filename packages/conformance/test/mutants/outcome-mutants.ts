import {
  type Execution,
  type HistoryPage,
  type HistoryQuery,
  type JobState,
  MemoryStore,
} from '@fleetcron/core';
import { TERMINAL_STATUSES } from '@fleetcron/core/backend';

/**
 * (s4) Store whose `record()` lets a terminal status overwrite another (last writer wins), as
 * every store did before the first-outcome rule: the holder-lost sweep's `lease_lost` replaces a
 * run's `succeeded`, in the row and in the job's last outcome.
 */
export class OverwritesOutcome extends MemoryStore {
  private readonly outcomes = new Map<string, Execution>();
  private readonly lastByJob = new Map<string, Execution>();

  override async record(execution: Execution): Promise<void> {
    await super.record(execution);
    if (!TERMINAL_STATUSES.includes(execution.status)) return;
    this.outcomes.set(execution.id, { ...execution });
    this.lastByJob.set(execution.job, { ...execution });
  }

  override async history(job: string, query?: HistoryQuery): Promise<HistoryPage> {
    const page = await super.history(job, query);
    return {
      ...page,
      executions: page.executions.map((e) => ({ ...(this.outcomes.get(e.id) ?? e) })),
    };
  }

  override async getJobState(job: string): Promise<JobState> {
    const state = await super.getJobState(job);
    const last = this.lastByJob.get(job);
    if (!last) return state;
    return {
      ...state,
      lastStatus: last.status,
      lastFireAt: last.fireAt,
      lastFinishedAt: last.finishedAt,
    };
  }
}
