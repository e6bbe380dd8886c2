import { type AlertDelivery, createAlertDelivery } from '../alerts/alert-delivery.js';
import type { AlertEvent } from '../alerts/notifier.js';
import type { JobContext } from '../middleware.js';
import type { LiveInstance, RegisteredJob } from '../registry.js';
import type { JobDefinition } from '../scheduler/job/index.js';
import type { RunStatus } from '../store.js';
import { every } from '../triggers/every.js';
import { scheduleDeadlines } from './schedule-deadlines.js';
import {
  failedRunAlerts,
  lateRunAlerts,
  missedFiresAlert,
  overdueAt,
  overdueEvent,
  type WatchSpan,
} from './watchdog-conditions.js';
import { WatchdogDeliveryError } from './watchdog-delivery-error.js';
import {
  type FleetWatchdogOptions,
  type ResolvedWatchdog,
  resolveWatchdog,
  WATCHDOG_MAX_LOOKBACK_MS,
} from './watchdog-options.js';
import { failedAndSkipped, newestPage } from './watchdog-reads.js';

/**
 * How far before a span's start the last written row of a job may have finished and the job still
 * be read, ms: rows of one job written out of order (an older finish written last) stay found.
 */
const WRITE_ORDER_SLACK_MS = 5 * 60 * 1000;

/** Statuses of a run that ended (read for `run_late`): every terminal status but `skipped`. */
const FINISHED: readonly RunStatus[] = [
  'succeeded',
  'failed',
  'timed_out',
  'lease_lost',
  'aborted',
];

/**
 * The fleet watchdog: a job you add like any other (`scheduler.add(fleetWatchdog({...}))`) that
 * runs once fleet-wide per fire through the normal claim, so four instances never send four
 * e-mails. Each run judges the span since the watchdog's last successful run (at most a day)
 * from the store's history and registry (each span ends `settleMs` before the run's fire, so
 * late-written rows are in), and notifies:
 * - `run_failed`: a run ended `failed` or `timed_out` (after its retries);
 * - `fires_missed`: fires recorded `skipped` because nobody could claim them (reason `missed`:
 *   the whole fleet was down; `backend_unavailable`: every claim failed), one alert per job;
 * - `job_overdue` (the dead-man's switch, for the jobs in `overdue` and the stored schedules
 *   with `options.overdueAfterMs`): no success by the job's expected fire plus its grace;
 *   resolved at the next success;
 * - `run_late` (with `lateAfterMs`): a run started more than that after its fire time.
 *
 * Alert ids derive from the facts (the failed execution's end, the expected fire), never from
 * the run that reports them, so a receiver can drop a repeat by id. A run whose delivery fails
 * for good ends `failed` (`WatchdogDeliveryError`, code `WATCHDOG_UNDELIVERED`): the next run
 * judges the same span again, and re-sends what it finds (at least once); so does the next run
 * after a watchdog run whose instance died mid-send. Conditions are compared at the two ends of
 * each span: an overdue episode that opens and closes inside one span is not reported.
 *
 * @throws InvalidOptionError naming the field, for bad options.
 * @example
 * scheduler.add(fleetWatchdog({ store, notifiers: [webhookNotifier({ url, secret })], overdue: { export: 3_600_000 } }));
 */
export function fleetWatchdog(options: FleetWatchdogOptions): JobDefinition {
  const watchdog = resolveWatchdog(options);
  return {
    name: watchdog.name,
    trigger: every(watchdog.everyMs),
    overlap: 'skip',
    async run(ctx) {
      const fireAt = ctx.fireAt.getTime();
      const settle = watchdog.settleMs;
      const span: WatchSpan = {
        from: (await previousRunAt(watchdog, fireAt)) - settle,
        to: fireAt - settle,
      };
      const events = await judgeSpan(watchdog, span);
      // on the run's clock (a fake one in tests) and named after this instance, unless given
      const delivery = { clock: ctx.clock, instanceId: ctx.instanceId, ...watchdog.delivery };
      const deliveries = watchdog.notifiers.map((n) => createAlertDelivery(n, delivery));
      const failures = await deliverAll(deliveries, events, ctx);
      for (const event of events) watchdog.onAlert?.(event);
      ctx.log.info('fleet watchdog run', {
        from: new Date(span.from).toISOString(),
        alerts: events.length,
        undelivered: failures.length,
      });
      if (failures.length > 0) throw new WatchdogDeliveryError(failures);
    },
  };
}

/**
 * Where this run's span starts: the fire time of the watchdog's newest successful run before
 * `to`, else one interval before `to`; never more than {@link WATCHDOG_MAX_LOOKBACK_MS} back.
 */
async function previousRunAt(watchdog: ResolvedWatchdog, to: number): Promise<number> {
  const page = await watchdog.store.history(watchdog.name, { status: 'succeeded', limit: 5 });
  const previous = page.executions.map((row) => row.fireAt).find((fireAt) => fireAt < to);
  const from = previous ?? to - watchdog.everyMs;
  return Math.max(from, to - WATCHDOG_MAX_LOOKBACK_MS);
}

/** Every alert event of `span`, in job order. */
async function judgeSpan(watchdog: ResolvedWatchdog, span: WatchSpan): Promise<AlertEvent[]> {
  const { store } = watchdog;
  const events: AlertEvent[] = [];
  // a job is read when its last written row finished near or after the span's start: that row
  // is the last WRITTEN, not the latest finish (instances write out of order), hence the slack
  const jobs = (await store.listJobs())
    .filter((state) => state.job !== watchdog.name)
    .filter(
      (state) =>
        state.lastFinishedAt !== null && state.lastFinishedAt > span.from - WRITE_ORDER_SLACK_MS,
    );
  for (const { job } of jobs) {
    const rows = await failedAndSkipped(store, job, span, watchdog);
    events.push(...failedRunAlerts(rows.failed, span));
    if (watchdog.lateAfterMs !== null) {
      const finished = await newestPage(store, job, FINISHED);
      events.push(...lateRunAlerts(finished.executions, span, watchdog.lateAfterMs));
    }
    const missed = missedFiresAlert(rows.skipped, span);
    if (missed) events.push(missed);
  }
  // the stored schedules' deadlines (`options.overdueAfterMs`), and the options' per job (they win)
  const overdue = new Map([...(await scheduleDeadlines(store)), ...watchdog.overdue]);
  if (overdue.size > 0) {
    const instances = await store.instances();
    for (const [job, graceMs] of overdue) {
      const definition = definitionOf(instances, job);
      const successes = await newestPage(store, job, ['succeeded']);
      const full = successes.nextCursor !== null;
      const rows = successes.executions;
      const before = overdueAt(span.from, rows, full, definition, graceMs);
      const after = overdueAt(span.to, rows, full, definition, graceMs);
      const event = overdueEvent(job, before, after, rows, graceMs, span);
      if (event) events.push(event);
    }
  }
  return events;
}

/**
 * The definition of `job` the fleet runs: of the live instances' records, the one registered
 * most recently (the newest definition takes over within two heartbeats, see
 * `definitionsInForce`), with the earliest registration time of that same definition. `null`
 * when no live instance defines the job.
 */
function definitionOf(instances: readonly LiveInstance[], job: string): RegisteredJob | null {
  const records = instances.flatMap((instance) => instance.jobs.filter((j) => j.name === job));
  const newest = records.reduce<RegisteredJob | null>(
    (best, r) => (best === null || (r.registeredAt ?? 0) > (best.registeredAt ?? 0) ? r : best),
    null,
  );
  if (newest === null) return null;
  const same = records.filter((r) => r.definitionHash === newest.definitionHash);
  const since = Math.min(...same.map((r) => r.registeredAt ?? Number.POSITIVE_INFINITY));
  return Number.isFinite(since) ? { ...newest, registeredAt: since } : newest;
}

/**
 * Delivers each event to every notifier (in order, notifiers together); the last failure of each
 * delivery that gave up, none when all were delivered.
 */
async function deliverAll(
  deliveries: readonly AlertDelivery[],
  events: readonly AlertEvent[],
  ctx: JobContext,
): Promise<Error[]> {
  const failures: Error[] = [];
  for (const event of events) {
    const results = await Promise.all(
      deliveries.map((d) => d.deliver(event, { signal: ctx.signal })),
    );
    for (const r of results) {
      if (!r.delivered) failures.push(r.error ?? new Error('delivery failed without an error'));
    }
  }
  return failures;
}
