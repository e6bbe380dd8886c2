import { TriggerError } from '../../errors.js';
import type { Trigger } from '../../trigger.js';

/** Most passed fires listed one by one as missed per wake-up; older ones are only counted. */
export const MAX_MISSED_LISTED = 1_000;

/** What to do when a job's timer wakes. */
export interface FirePlan {
  /** The fire to claim now, or `null` when no passed fire is inside the claim window. */
  claim: number | null;
  /** Passed fires that will not be claimed by this instance (another one may have run them). */
  missed: number[];
  /** Further missed fires that were not listed (when more than {@link MAX_MISSED_LISTED} passed). */
  unlisted: boolean;
  /** The next fire strictly after `now`, or `null` when the trigger is done (or failed). */
  next: number | null;
  /**
   * Set when the trigger threw (or broke its contract) asked for the fire after a passed one:
   * the passed fires found until then are planned as usual, and the job gets no further fires.
   */
  failed?: unknown;
}

/**
 * `trigger.next()` in epoch ms; `null` when done. Throws what the trigger throws, and a
 * `TriggerError` when it answers an invalid Date or a time not after its argument (a trigger
 * that does not move forward would make the scheduler spin).
 */
export function nextFire(trigger: Trigger, after: number): number | null {
  const next = trigger.next(new Date(after));
  if (next === null) return null;
  const ms = next instanceof Date ? next.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new TriggerError(
      trigger,
      `next(${iso(after)}) returned ${String(next)}, not a valid Date`,
    );
  }
  if (ms <= after) {
    throw new TriggerError(
      trigger,
      `next(${iso(after)}) returned ${iso(ms)}, which is not after its argument; a trigger must return a later time or null`,
    );
  }
  return ms;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The late-fire rule. A job's timer woke for fire `due` at wall time `now` (`due <= now`). When
 * the process was late (blocked event loop, suspend, wall clock stepped forward) several fires
 * may have passed. Only the NEWEST passed fire is claimed, and only while it is inside the claim
 * window (`now - windowMs <= fire`); every older passed fire is reported as missed (the instances
 * that were on time may have run it; catching up all of them would stampede the job).
 */
export function planFires(trigger: Trigger, due: number, now: number, windowMs: number): FirePlan {
  const missed: number[] = [];
  let unlisted = false;
  let newest: number | null = null;
  let f: number | null = due;
  let steps = 0;
  let failed: unknown;
  try {
    while (f !== null && f <= now) {
      if (newest !== null) missed.push(newest);
      newest = f;
      f = nextFire(trigger, f);
      if (++steps >= MAX_MISSED_LISTED && f !== null && f <= now) {
        // far behind: jump to the newest passed fire without listing everything in between
        unlisted = true;
        missed.push(newest);
        newest = newestAtOrBefore(trigger, now, f - 1);
        f = nextFire(trigger, now);
        break;
      }
    }
  } catch (error) {
    if (newest === null) throw error;
    failed = error;
    f = null;
  }
  let claim = newest;
  if (claim !== null && claim < now - windowMs) {
    missed.push(claim);
    claim = null;
  }
  return failed === undefined
    ? { claim, missed, unlisted, next: f }
    : { claim, missed, unlisted, next: null, failed };
}

/** The newest fire `x` with `floor < x <= now`, or `null`, found without walking every fire. */
function newestAtOrBefore(trigger: Trigger, now: number, floor: number): number | null {
  for (let d = 1; ; d *= 2) {
    const from = Math.max(now - d, floor);
    let f = nextFire(trigger, from);
    if (f !== null && f <= now) {
      for (;;) {
        const n = nextFire(trigger, f);
        if (n === null || n > now) return f;
        f = n;
      }
    }
    if (from === floor) return null;
  }
}
