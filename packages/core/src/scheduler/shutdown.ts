import { SchedulerStoppedError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { FireRun, HistoryWriter } from './fire/index.js';
import type { TimerQueue, TimerSource } from './timing/index.js';
import { settledWithin } from './timing/index.js';

/**
 * After the drain deadline `stop()` aborts running jobs and waits at most this long for them to
 * settle, and at most this long again to record the rest `aborted` and release their leases.
 */
export const STOP_GRACE_MS = 1_000;

/** What `stop()` drains. */
export interface DrainTarget {
  /** The fires still being handled. */
  fires(): FireRun[];
  readonly history: HistoryWriter;
  readonly timers: TimerSource;
  readonly log: Logger;
  /** Called when the drain time is over, before runs are aborted. */
  onAborting(): void;
}

/**
 * The part of `stop()` after claims stopped: wait `drainMs` for fires (and history writes) to
 * finish; then abort the runs' signals with `SchedulerStoppedError` and wait
 * {@link STOP_GRACE_MS}; then stop waiting for runs that ignore their signal: they are recorded
 * `aborted` and their leases released. Never rejects; never waits longer than
 * `drainMs + 2 × STOP_GRACE_MS` (plus the bounded history writes).
 */
export async function drainFires(target: DrainTarget, drainMs: number): Promise<void> {
  const { timers } = target;
  const settled = () =>
    Promise.all(target.fires().map((f) => f.done)).then(() => target.history.idle());
  if (await settledWithin(settled(), drainMs, timers)) return;
  target.onAborting();
  const reason = new SchedulerStoppedError('run past the drain deadline of stop()');
  for (const fire of target.fires()) fire.abort(reason);
  if (await settledWithin(settled(), STOP_GRACE_MS, timers)) return;
  const left = target.fires();
  target.log.warn('fleetcron: jobs ignored their aborted signal; recording them aborted', {
    jobs: left.map((f) => f.job.name),
  });
  await settledWithin(Promise.all(left.map((f) => f.forceFinish())), STOP_GRACE_MS, timers);
  await settledWithin(target.history.idle(), STOP_GRACE_MS, timers);
}

/**
 * The end of `stop()`, once the runs are done: resigns leadership (`gate`, leader mode) and
 * leaves the fleet registry (`fleet`, if any; a hanging backend does not hold `stop()` up past
 * {@link STOP_GRACE_MS} each), gives up the outcome
 * writes still being retried (logged with their id), waits for history writes (bounded), and
 * clears the timer. Never rejects.
 */
export async function finishStop(
  fleet: { stop(): Promise<void> } | null,
  history: HistoryWriter,
  timers: TimerQueue,
  gate?: { resign(): Promise<void> },
): Promise<void> {
  if (gate) await settledWithin(gate.resign(), STOP_GRACE_MS, timers);
  if (fleet) await settledWithin(fleet.stop(), STOP_GRACE_MS, timers);
  history.abandon();
  await settledWithin(history.idle(), STOP_GRACE_MS, timers);
  timers.clear();
}
