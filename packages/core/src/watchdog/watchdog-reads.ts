import type { Execution, RunStatus, Store } from '../store.js';
import type { WatchSpan } from './watchdog-conditions.js';
import { WATCHDOG_PAGE } from './watchdog-options.js';

/** Statuses of a run that failed after its retries. */
const FAILED: readonly RunStatus[] = ['failed', 'timed_out'];

/** The newest {@link WATCHDOG_PAGE} executions of `job` with one of `status`. */
export async function newestPage(
  store: Store,
  job: string,
  status: readonly RunStatus[],
): Promise<{ executions: Execution[]; nextCursor: string | null }> {
  return store.history(job, { status, limit: WATCHDOG_PAGE });
}

/** What {@link failedAndSkipped} read of one job. */
export interface FailedAndSkipped {
  /** The newest {@link WATCHDOG_PAGE} `failed`/`timed_out` executions (none unless asked for). */
  readonly failed: readonly Execution[];
  /**
   * The `skipped` executions that may have finished inside the span: the newest
   * {@link WATCHDOG_PAGE}, or every one that started after the span's start (none unless asked for).
   */
  readonly skipped: readonly Execution[];
}

/**
 * The rows `run_failed` and `fires_missed` judge for `job` in `span`, in one `history()` call
 * when it can: one page of the three statuses, split locally. A kind the page may have cut short
 * (the page is full, the job has more rows) is read again on its own page, so a kind is never
 * crowded out by the other: `failed` unless the page holds {@link WATCHDOG_PAGE} of them;
 * `skipped` unless it holds that many or reaches back to the span's start (a skipped row finishes
 * when it starts, so an older one cannot have finished inside the span). Most jobs fail and skip
 * rarely: one call instead of two (see `docs/performance/watchdog.md`).
 */
export async function failedAndSkipped(
  store: Store,
  job: string,
  span: WatchSpan,
  wanted: { failed: boolean; missed: boolean },
): Promise<FailedAndSkipped> {
  if (!wanted.failed && !wanted.missed) return { failed: [], skipped: [] };
  if (!wanted.missed) {
    return { failed: (await newestPage(store, job, FAILED)).executions, skipped: [] };
  }
  if (!wanted.failed) {
    return { failed: [], skipped: (await newestPage(store, job, ['skipped'])).executions };
  }
  const page = await newestPage(store, job, [...FAILED, 'skipped']);
  let failed = page.executions.filter((row) => row.status !== 'skipped');
  let skipped = page.executions.filter((row) => row.status === 'skipped');
  if (page.nextCursor !== null) {
    const oldest = page.executions.at(-1)?.startedAt ?? Number.POSITIVE_INFINITY;
    if (failed.length < WATCHDOG_PAGE) {
      failed = (await newestPage(store, job, FAILED)).executions;
    }
    if (skipped.length < WATCHDOG_PAGE && oldest > span.from) {
      skipped = (await newestPage(store, job, ['skipped'])).executions;
    }
  }
  return { failed, skipped };
}
