import { type Alert, openAlert, resolveAlert } from '../alerts/alert.js';
import type { AlertEvent } from '../alerts/notifier.js';
import { upcomingFires } from '../fleet/upcoming-fires.js';
import type { RegisteredJob } from '../registry.js';
import type { Execution } from '../store.js';

/**
 * The span one watchdog run judges: what finished after `from` and at or before `to` (epoch ms,
 * the fleet's clock). Consecutive runs judge adjoining spans, so each fact falls in one span.
 */
export interface WatchSpan {
  readonly from: number;
  readonly to: number;
}

/** Skip reasons that mean nobody ran the fire although it was due. */
const MISSED_REASONS: ReadonlySet<string> = new Set(['missed', 'backend_unavailable']);

/** Oldest fire first (history pages come newest first): alerts go out in the order of the facts. */
function byFire(a: Execution, b: Execution): number {
  return a.fireAt - b.fireAt;
}

/** Whether `row` finished inside `span`. */
function finishedIn(row: Execution, span: WatchSpan): boolean {
  return row.finishedAt !== null && row.finishedAt > span.from && row.finishedAt <= span.to;
}

/**
 * One `run_failed` alert per execution of `rows` that ended `failed` or `timed_out` inside
 * `span` (each after its retries: the retry middleware runs inside the run). Opened at the
 * execution's end, so the alert's id is the same whichever watchdog run reports it.
 */
export function failedRunAlerts(rows: readonly Execution[], span: WatchSpan): AlertEvent[] {
  return rows
    .filter(
      (row) => (row.status === 'failed' || row.status === 'timed_out') && finishedIn(row, span),
    )
    .sort(byFire)
    .map((row) => ({
      action: 'opened' as const,
      alert: openAlert(
        {
          kind: 'run_failed',
          severity: 'critical',
          job: row.job,
          fireAt: row.fireAt,
          summary: `${row.job} ${row.status === 'timed_out' ? 'timed out' : 'failed'} after ${row.attempt} attempt${row.attempt === 1 ? '' : 's'} (fire ${new Date(row.fireAt).toISOString()})`,
          details: {
            status: row.status,
            attempts: row.attempt,
            instanceId: row.instanceId,
            error: firstLine(row.error),
          },
        },
        row.finishedAt ?? row.startedAt,
      ),
    }));
}

/**
 * One `fires_missed` alert for the fires of one job that `rows` record `skipped` because nobody
 * claimed them (reason `missed` or `backend_unavailable`) inside `span`; `null` when none. Keyed
 * by the oldest such fire, opened when it was recorded.
 */
export function missedFiresAlert(rows: readonly Execution[], span: WatchSpan): AlertEvent | null {
  const missed = rows
    .filter((row) => row.status === 'skipped' && MISSED_REASONS.has(row.reason ?? ''))
    .filter((row) => finishedIn(row, span))
    .sort(byFire);
  const first = missed[0];
  if (first === undefined) return null;
  const reasons = [...new Set(missed.map((row) => row.reason))];
  const alert = openAlert(
    {
      kind: 'fires_missed',
      severity: 'warning',
      job: first.job,
      fireAt: first.fireAt,
      summary: `${missed.length} fire${missed.length === 1 ? '' : 's'} of ${first.job} did not run (${reasons.join(', ')}), the first at ${new Date(first.fireAt).toISOString()}`,
      details: { fires: missed.map((row) => row.fireAt), reasons },
    },
    first.finishedAt ?? first.startedAt,
  );
  return { action: 'opened', alert };
}

/**
 * One `run_late` alert per execution of `rows` that started more than `lateAfterMs` after its
 * fire time and ended inside `span` (whatever its outcome; skipped fires never started). Opened
 * at the execution's end.
 */
export function lateRunAlerts(
  rows: readonly Execution[],
  span: WatchSpan,
  lateAfterMs: number,
): AlertEvent[] {
  return rows
    .filter((row) => row.status !== 'skipped' && finishedIn(row, span))
    .filter((row) => row.startedAt - row.fireAt > lateAfterMs)
    .sort(byFire)
    .map((row) => {
      const lateMs = row.startedAt - row.fireAt;
      const alert = openAlert(
        {
          kind: 'run_late',
          severity: 'warning',
          job: row.job,
          fireAt: row.fireAt,
          summary: `${row.job} started ${lateMs} ms after its fire at ${new Date(row.fireAt).toISOString()} (threshold ${lateAfterMs} ms)`,
          details: { lateMs, lateAfterMs, instanceId: row.instanceId, status: row.status },
        },
        row.finishedAt ?? row.startedAt,
      );
      return { action: 'opened' as const, alert };
    });
}

/** Whether a job is overdue at one moment, and since which expected fire. */
export interface OverdueState {
  /** The first fire after the last success (or after the definition registered), `null` when none. */
  readonly expectedAt: number | null;
  /** Whether `expectedAt` plus the grace has passed with no success since. */
  readonly overdue: boolean;
}

/**
 * Whether `job` is overdue at `at`: its first fire after its newest success that finished by
 * `at` (`successes`, the job's `succeeded` executions; its definition's registration time when
 * none) is at least `graceMs` old. `null` when it cannot be told: `successes` (one page, newest
 * first) may not reach back to `at`, or no definition of the job can be read.
 */
export function overdueAt(
  at: number,
  successes: readonly Execution[],
  pageFull: boolean,
  definition: RegisteredJob | null,
  graceMs: number,
): OverdueState | null {
  if (definition === null) return null;
  const before = successes.filter((row) => row.finishedAt !== null && row.finishedAt <= at);
  if (before.length === 0 && pageFull) return null; // older successes are beyond the page
  const last = before.reduce<number | null>(
    (newest, row) => (newest === null || row.fireAt > newest ? row.fireAt : newest),
    null,
  );
  const since = last ?? definition.registeredAt ?? null;
  if (since === null) return null;
  const expected = upcomingFires(definition, since, 50).find((fire) => fire.excluded === undefined);
  if (expected === undefined) return { expectedAt: null, overdue: false };
  return { expectedAt: expected.at, overdue: expected.at + graceMs <= at };
}

/**
 * The `job_overdue` event of one span: `opened` when the job was not overdue at `span.from` and
 * is at `span.to` (opened at the expected fire plus the grace), `resolved` when the reverse (the
 * same alert, resolved at the first success after its expected fire); `null` otherwise.
 */
export function overdueEvent(
  job: string,
  before: OverdueState | null,
  after: OverdueState | null,
  successes: readonly Execution[],
  graceMs: number,
  span: WatchSpan,
): AlertEvent | null {
  if (before === null || after === null || before.overdue === after.overdue) return null;
  const episode = after.overdue ? after : before;
  const expectedAt = episode.expectedAt as number; // overdue implies an expected fire
  const opened = overdueAlert(job, expectedAt, graceMs);
  if (after.overdue) return { action: 'opened', alert: opened };
  const success = successes
    .filter(
      (row) => row.fireAt >= expectedAt && row.finishedAt !== null && row.finishedAt <= span.to,
    )
    .reduce<number>((first, row) => Math.min(first, row.finishedAt as number), span.to);
  return { action: 'resolved', alert: resolveAlert(opened, success) };
}

function overdueAlert(job: string, expectedAt: number, graceMs: number): Alert {
  return openAlert(
    {
      kind: 'job_overdue',
      severity: 'critical',
      job,
      fireAt: expectedAt,
      summary: `${job} has not succeeded since its fire at ${new Date(expectedAt).toISOString()} (grace ${Math.round(graceMs / 1000)} s)`,
      details: { expectedAt, graceMs },
    },
    expectedAt + graceMs,
  );
}

/** The first line of a stored error (its message), `null` when none. */
function firstLine(error: string | null): string | null {
  return error === null ? null : (error.split('\n')[0] ?? null);
}
