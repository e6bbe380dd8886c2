import type { ClockSample } from '../../fleet-clock/offset-estimator.js';
import type { Logger } from '../../logger.js';
import { fireLockKey } from '../../shards/part-keys.js';
import { jitterOffset, type NormalizedJob } from '../job/index.js';
import type { GiveUp, GiveUpSignal, TimerQueue } from '../timing/index.js';
import { type ClaimContext, type ClaimOutcome, claimFire } from './claim.js';
import type { FireEvents } from './fire-events.js';
import type { FireDeps, FireKind } from './fire-types.js';

/** Most times one fire is claimed again after `early` refusals before this instance gives up. */
export const MAX_EARLY_RETRIES = 8;

/** Pause before claiming again when the corrected clock already says the fire is due, ms. */
const EARLY_BACKOFF_MS = 20;

/** What claiming on time needs beyond a claim. */
export interface OnTimeContext extends ClaimContext {
  readonly queue: TimerQueue;
  /** Aborted when `stop()` begins: a fire waiting to claim again is dropped. */
  readonly stopSignal: AbortSignal;
}

/** The fire a claim context is built for (a `FireRun`). */
export interface ClaimingFire {
  readonly job: NormalizedJob;
  readonly fireAt: number;
  readonly kind: FireKind;
  readonly events: FireEvents;
  readonly log: Logger;
}

/**
 * The claim context of `fire` on the fire path's `deps` (one per fire, built as one plain
 * object: nested spreads made this ~10x slower in V8). `stopping` aborts when `stop()` stops
 * waiting for the fire, and is the claims' give-up signal too; `sampled` takes the backend
 * times of its answers.
 */
export function onTimeContext(
  deps: FireDeps,
  fire: ClaimingFire,
  stopping: GiveUp,
  sampled: (sample: ClockSample) => void,
): OnTimeContext {
  const { job, kind } = fire;
  return {
    lock: deps.lock,
    clock: deps.clock,
    timers: deps.queue,
    queue: deps.queue,
    // a scheduled fire is launched ahead of its time: its claim waits for it
    claims: isScheduled(kind) ? deps.claimsOnFireTime : deps.claims,
    // a job with jitter claims its scheduled fires a fixed offset after their time
    claimAt:
      job.jitterMs > 0 && isScheduled(kind)
        ? fire.fireAt + jitterOffset(job, fire.fireAt)
        : undefined,
    owner: deps.instanceId,
    events: fire.events,
    log: fire.log,
    stopping,
    giveUp: stopping, // one per fire: a claim given up ends the fire
    stopSignal: deps.life.stopSignal,
    takesClaims: deps.life.takesClaims, // the lifecycle's own arrow: no closure per fire
    sampled,
    catchUp: kind.catchUp,
    ownLease: kind.missed === true, // recorded only, never run: no overlap to keep
    key: fireLockKey(job.name, kind.shard, deps.instanceId), // a part's own key
  };
}

/** A scheduled fire (or a part of one): not manual, not a holder-lost rerun, not a catch-up. */
export function isScheduled(kind: FireKind): boolean {
  return kind.requestedBy === undefined && !kind.recovery && !kind.catchUp && !kind.missed;
}

/**
 * After the backend refused a fire `early` (this instance's clock ran ahead of the backend's):
 * waits until the fleet's clock reaches the fire and claims it again, while it is refused
 * `early`. The refusal carried the backend's time, so the corrected clock already knows how
 * long to wait. An early refusal records nothing, so waiting never loses the fire: if this
 * instance gives up (after {@link MAX_EARLY_RETRIES} refusals, or `stop()`), the other instances
 * still claim it. The first claim is the caller's own `claimFire` (no extra async frame per fire).
 */
export async function claimAfterEarly(
  c: OnTimeContext,
  job: NormalizedJob,
  fireAt: number,
): Promise<ClaimOutcome> {
  for (let attempt = 0; ; attempt++) {
    if (attempt >= MAX_EARLY_RETRIES) {
      c.log.warn(
        'fleetcron: the backend kept refusing the fire as early; left to other instances',
        {
          attempts: attempt + 1,
        },
      );
      return { status: 'lost' };
    }
    const waited = await waitForFire(c, fireAt, EARLY_BACKOFF_MS * 2 ** attempt);
    if (!waited || !c.takesClaims()) return { status: 'dropped' };
    const outcome = await claimFire(c, job, fireAt);
    if (outcome.status !== 'early') return outcome;
  }
}

/**
 * Resolves `true` once the fleet's clock reads `fireAt` (at least `minMs` from now, so a wrong
 * estimate cannot make a tight loop), `false` when `stop()` begins first.
 */
function waitForFire(c: OnTimeContext, fireAt: number, minMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const stopped: GiveUpSignal[] = [c.stopSignal, c.stopping];
    if (stopped.some((s) => s.aborted)) {
      resolve(false);
      return;
    }
    const done = (ok: boolean) => {
      c.queue.cancel(entry);
      for (const s of stopped) s.removeEventListener('abort', onStop);
      resolve(ok);
    };
    const onStop = () => done(false);
    const entry =
      fireAt - c.clock.now() > minMs
        ? c.queue.atWall(fireAt, () => done(true))
        : c.queue.after(minMs, () => done(true));
    for (const s of stopped) s.addEventListener('abort', onStop, { once: true });
  });
}
