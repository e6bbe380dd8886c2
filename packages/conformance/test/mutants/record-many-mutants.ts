import { type Execution, type JobState, MemoryStore } from '@fleetcron/core';
import { normalizeShard, TERMINAL_STATUSES } from '@fleetcron/core/backend';

const isTerminal = (e: Execution): boolean => TERMINAL_STATUSES.includes(e.status);

/** The reference: `recordMany` checks every execution, then is `record` of each, in order. */
export class RecordsEachInOrder extends MemoryStore {
  async recordMany(executions: readonly Execution[]): Promise<void> {
    for (const e of executions) normalizeShard(e.shard);
    for (const e of executions) await this.record(e);
  }
}

/**
 * (r1) Merges the batch by id keeping the LAST write of each (no first-outcome rule inside a
 * batch): an outcome followed by a late start of the same id leaves the row `running`.
 */
export class MergesLastWrite extends MemoryStore {
  async recordMany(executions: readonly Execution[]): Promise<void> {
    for (const e of executions) normalizeShard(e.shard);
    const last = new Map<string, Execution>();
    for (const e of executions) {
      last.delete(e.id);
      last.set(e.id, e);
    }
    for (const e of last.values()) await this.record(e);
  }
}

/** (r2) Sets the job's last outcome from the batch's last terminal write, even a dropped one. */
export class OutcomeFromBatchEnd extends MemoryStore {
  private readonly lastByJob = new Map<string, Execution>();

  async recordMany(executions: readonly Execution[]): Promise<void> {
    for (const e of executions) normalizeShard(e.shard);
    for (const e of executions) {
      await this.record(e);
      if (isTerminal(e)) this.lastByJob.set(e.job, e);
    }
  }

  override async record(execution: Execution): Promise<void> {
    await super.record(execution);
    this.lastByJob.delete(execution.job);
  }

  override async getJobState(job: string): Promise<JobState> {
    const state = await super.getJobState(job);
    const last = this.lastByJob.get(job);
    return last
      ? {
          ...state,
          lastStatus: last.status,
          lastFireAt: last.fireAt,
          lastFinishedAt: last.finishedAt,
        }
      : state;
  }
}

/** (r3) Writes each execution until one is refused: a bad one leaves the ones before it written. */
export class WritesUntilInvalid extends MemoryStore {
  async recordMany(executions: readonly Execution[]): Promise<void> {
    for (const e of executions) await this.record(e);
  }
}

/** (r4) Keeps the first `startedAt` of an id written twice in one batch (the row never moves). */
export class KeepsFirstStartedAt extends MemoryStore {
  async recordMany(executions: readonly Execution[]): Promise<void> {
    for (const e of executions) normalizeShard(e.shard);
    const first = new Map<string, number>();
    for (const e of executions) {
      const startedAt = first.get(e.id) ?? e.startedAt;
      first.set(e.id, startedAt);
      await this.record({ ...e, startedAt });
    }
  }
}

/** (r5) Applies the batch's writes of each job in reverse order. */
export class AppliesBatchReversed extends MemoryStore {
  async recordMany(executions: readonly Execution[]): Promise<void> {
    for (const e of executions) normalizeShard(e.shard);
    for (const e of [...executions].reverse()) await this.record(e);
  }
}
