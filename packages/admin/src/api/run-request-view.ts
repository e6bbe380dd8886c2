import type { Execution, FleetClient, RunRequestState, RunStatus } from '@fleetcron/core';

/** The part of core's `FleetClient` a run request's view reads. */
export type RunRequestFleet = Pick<FleetClient, 'runRequest' | 'history'>;

/** Where a fleet run request is, and the run it became (`GET api/run-requests/:id`, `fleetcron run --wait`). */
export interface RunRequestView {
  /** The request's state as the store answers it (`pending`, `taken`, `decided` with `fireAt`). */
  request: RunRequestState;
  /**
   * The history rows of the manual fire the request became (job and `fireAt`): one row, or one
   * per part of a sharded job; empty while the request is not decided or the row is not written yet.
   */
  executions: Execution[];
  /**
   * The fire's outcome once every row of it is terminal: `succeeded` when all succeeded, else the
   * first other status (`failed`, `timed_out`, `lease_lost`, `aborted`, `skipped`); `null` while
   * not decided, not recorded yet, or running.
   */
  outcome: RunStatus | null;
}

/** Rows read per history page while looking for the fire's rows. */
const PAGE = 100;
/** Pages read at most (a job recording more runs than this since the request is very busy). */
const MAX_PAGES = 5;
/** Slack for clocks: rows that started this long before the request are surely older. */
const CLOCK_SLACK_MS = 60_000;

/** The rows of `job`'s fire `fireAt`, newest first, reading history pages back to `since`. */
async function fireRows(
  fleet: RunRequestFleet,
  job: string,
  fireAt: number,
  since: number,
): Promise<Execution[]> {
  const rows: Execution[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await fleet.history(job, { limit: PAGE, cursor });
    rows.push(...answer.executions.filter((e) => e.fireAt === fireAt));
    const oldest = answer.executions.at(-1);
    if (!answer.nextCursor || !oldest || oldest.startedAt < since - CLOCK_SLACK_MS) break;
    cursor = answer.nextCursor;
  }
  return rows;
}

/** The outcome of a fire's rows (see {@link RunRequestView.outcome}). */
export function fireOutcome(rows: readonly Execution[]): RunStatus | null {
  if (rows.length === 0 || rows.some((e) => e.status === 'running' || e.finishedAt === null))
    return null;
  return rows.find((e) => e.status !== 'succeeded')?.status ?? 'succeeded';
}

/**
 * Reads where run request `id` is and, once decided, the history rows of the fire it became;
 * `null` for an unknown id (or a decided one the store collected, after at least an hour).
 * @throws InvalidOptionError (`store`) for a store that cannot look requests up (none built in).
 */
export async function runRequestView(
  fleet: RunRequestFleet,
  id: string,
): Promise<RunRequestView | null> {
  const request = await fleet.runRequest(id);
  if (request === null) return null;
  if (request.state !== 'decided' || request.fireAt === null)
    return { request, executions: [], outcome: null };
  const executions = await fireRows(fleet, request.job, request.fireAt, request.requestedAt);
  return { request, executions, outcome: fireOutcome(executions) };
}
