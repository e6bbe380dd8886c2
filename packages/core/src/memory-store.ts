import {
  boundErrorText,
  DEFAULT_MAX_ERROR_LENGTH,
  decodeCursor,
  type Execution,
  encodeCursor,
  type HistoryPage,
  type HistoryQuery,
  type JobState,
  type Store,
  TERMINAL_STATUSES,
} from './store.js';
import { assertPositiveInteger } from './validate.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Longest stored error text, in characters. Default 8192. */
  maxErrorLength?: number;
}

/** Orders executions newest first by `(startedAt, id)`. */
export function compareNewestFirst(a: Execution, b: Execution): number {
  if (a.startedAt !== b.startedAt) return b.startedAt - a.startedAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * The reference {@link Store}, in process memory: history and job state for tests, demos and
 * single-process use. Nothing survives the process.
 */
export class MemoryStore implements Store {
  readonly backend = 'memory';
  private readonly maxErrorLength: number;
  private readonly executions = new Map<string, Execution>();
  private readonly states = new Map<string, JobState>();

  constructor(options: MemoryStoreOptions = {}) {
    this.maxErrorLength = options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH;
    assertPositiveInteger('maxErrorLength', this.maxErrorLength);
  }

  async record(execution: Execution): Promise<void> {
    const stored = { ...execution, error: boundErrorText(execution.error, this.maxErrorLength) };
    this.executions.set(execution.id, stored);
    if (TERMINAL_STATUSES.includes(execution.status)) {
      const state = this.stateOf(execution.job);
      state.lastStatus = execution.status;
      state.lastFireAt = execution.fireAt;
      state.lastFinishedAt = execution.finishedAt;
    }
  }

  async history(job: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    const limit = query.limit ?? 50;
    assertPositiveInteger('limit', limit);
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    const rows = [...this.executions.values()]
      .filter((e) => e.job === job)
      .sort(compareNewestFirst)
      .filter(
        (e) =>
          !after ||
          e.startedAt < after.startedAt ||
          (e.startedAt === after.startedAt && e.id < after.id),
      );
    const page = rows.slice(0, limit).map((e) => ({ ...e }));
    const last = page.at(-1);
    return {
      executions: page,
      nextCursor: rows.length > limit && last ? encodeCursor(last.startedAt, last.id) : null,
    };
  }

  async prune(before: number): Promise<number> {
    let removed = 0;
    for (const [id, execution] of this.executions) {
      if (execution.startedAt < before) {
        this.executions.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async getJobState(job: string): Promise<JobState> {
    return { ...this.stateOf(job) };
  }

  async setPaused(job: string, paused: boolean): Promise<void> {
    this.stateOf(job).paused = paused;
  }

  private stateOf(job: string): JobState {
    let state = this.states.get(job);
    if (!state) {
      state = { job, paused: false, lastStatus: null, lastFireAt: null, lastFinishedAt: null };
      this.states.set(job, state);
    }
    return state;
  }
}
