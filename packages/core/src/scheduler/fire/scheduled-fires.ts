import type { Logger } from '../../logger.js';
import {
  claimDelayMs,
  type PartPlacement,
  placeParts,
  positionOf,
} from '../../shards/placement.js';
import type { NormalizedJob } from '../job/index.js';
import type { LeaderGate } from '../leader/index.js';
import type { LifecycleView } from '../lifecycle.js';
import type { QueueEntry, TimerQueue } from '../timing/index.js';
import type { FireRun } from './fire-run.js';
import type { FireKind } from './fire-types.js';

/** What starting a scheduled fire needs from the scheduler. */
export interface ScheduledFireDeps {
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly log: Logger;
  readonly gate: LeaderGate;
  /** How long non-preferred parts wait, ms (`shardGraceMs`). */
  readonly graceMs: number;
  /** Ids of the live instances defining `job` (the registry, as of the last heartbeat). */
  liveFor(job: string): string[] | null;
  /** The fleet clock's time, epoch ms. */
  now(): number;
  /** The scheduler's lifecycle: parts still waiting for their grace are dropped at `stop()`. */
  readonly life: LifecycleView;
  /** Starts handling one fire (the fire path). */
  launch(job: NormalizedJob, fireAt: number, kind: FireKind): FireRun;
}

/**
 * Starts a scheduled fire, per the scheduler's mode and the job's `shards`:
 *
 * - plain job: claimed here in claims mode; in leader mode only while this instance leads (the
 *   fire is then tracked: the term's end aborts it);
 * - `shards: 'each'`: claimed here on this instance's own key (`eachKey`), so it runs once on
 *   every live instance;
 * - `shards: n`: see {@link launchParts}.
 */
export function launchScheduled(d: ScheduledFireDeps, job: NormalizedJob, fireAt: number): void {
  if (job.shards === null) {
    if (d.gate.claimsPlainFires()) d.gate.track(d.launch(job, fireAt, {}));
    return;
  }
  if (job.shards === 'each') {
    const { index, count } = positionOf(d.liveFor(job.name), d.instanceId);
    d.launch(job, fireAt, { shard: { index, count, each: true } });
    return;
  }
  launchParts(d, job, fireAt, job.shards);
}

/**
 * The parts of one fire of a `shards: n` job on this instance: its preferred parts (see
 * `placeParts`) are claimed at once, every other part after the grace, in its fallback rank,
 * and one grace later still while this instance already holds a part of the fire
 * (`claimDelayMs`). Each part is claimed on its own key through the fire path (batched with
 * the claims due at the same moment), so each part runs exactly once fleet-wide, wherever the
 * claims land.
 */
export function launchParts(
  d: ScheduledFireDeps,
  job: NormalizedJob,
  fireAt: number,
  count: number,
): void {
  const plan = placeParts({
    count,
    liveIds: d.liveFor(job.name),
    self: d.instanceId,
    graceMs: d.graceMs,
  });
  let held = 0;
  const now = d.now();
  const pending = new Set<QueueEntry>();
  const stopped = d.life.stopSignal;
  const onStop = () => {
    for (const entry of pending) d.queue.cancel(entry);
    pending.clear();
  };
  stopped.addEventListener('abort', onStop, { once: true });
  const settle = () => {
    if (pending.size === 0) stopped.removeEventListener('abort', onStop);
  };
  const claim = (part: PartPlacement) => {
    if (!d.life.takesClaims()) return;
    d.launch(job, fireAt, {
      shard: { index: part.index, count },
      onClaimed: (status) => {
        if (status === 'won' || status === 'busy') held++;
      },
    });
  };
  const track = (entry: QueueEntry) => pending.add(entry);
  const untrack = (entry: QueueEntry) => {
    pending.delete(entry);
    settle();
  };
  for (const part of plan) {
    if (part.rank === 0) {
      claim(part);
      continue;
    }
    // the grace counts from the fire time when the fire was launched ahead of it (prepared),
    // else from now (a launch delayed, e.g. behind the job's catch-up pass)
    const first = d.queue.after(part.delayMs + Math.max(0, fireAt - now), () => {
      const extra = claimDelayMs(part, held, d.graceMs) - part.delayMs;
      if (extra > 0) {
        const second = d.queue.after(extra, () => {
          claim(part);
          untrack(second);
        });
        track(second);
      } else claim(part);
      untrack(first);
    });
    track(first);
  }
  settle();
}
