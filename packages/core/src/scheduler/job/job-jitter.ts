import { createHash } from 'node:crypto';
import { InvalidOptionError } from '../../errors.js';
import type { Trigger } from '../../trigger.js';

/** Longest `jitterMs` a job may have: one day. */
export const MAX_JITTER_MS = 86_400_000;

/**
 * Checks a job's `jitterMs` (absent: 0, no jitter). With `windowMs` (the lock's claim window) it
 * must also be at most half of it: a fire claimed later than the window after its time is stale
 * (refused by the lock, planned as missed), and the other half is left for a late wake and the
 * claim itself.
 *
 * @throws InvalidOptionError (`jitterMs`) unless an integer of milliseconds in 0…1 day and, with
 * `windowMs`, at most `windowMs / 2`.
 */
export function checkJitter(value: unknown, windowMs?: number): number {
  if (value === undefined) return 0;
  if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > MAX_JITTER_MS) {
    throw new InvalidOptionError(
      'jitterMs',
      `must be an integer number of milliseconds from 0 to ${MAX_JITTER_MS} (one day), got ${String(value)}.`,
    );
  }
  const jitterMs = value as number;
  if (windowMs !== undefined && jitterMs > windowMs / 2) {
    throw new InvalidOptionError(
      'jitterMs',
      `must be at most half the lock's claim window (windowMs ${windowMs} ms: at most ${Math.floor(windowMs / 2)} ms), got ${jitterMs}: a fire claimed later than the window is stale. Lower jitterMs or give the lock a longer windowMs.`,
    );
  }
  return jitterMs;
}

/**
 * How long after its fire time the fire `fireAt` of a job with `jitterMs` is claimed and run,
 * ms: the same on every instance (a SHA-256 of the job's name and the fire time, spread evenly
 * over `[0, bound)`), where the bound is `jitterMs`, and at most the time to the job's next fire
 * minus 1 ms, so a fire is never claimed at or after the next one. 0 without jitter, and when
 * the trigger throws asked for the next fire (the fire path reports trigger errors).
 */
export function jitterOffset(
  job: { readonly name: string; readonly trigger: Trigger; readonly jitterMs: number },
  fireAt: number,
): number {
  if (job.jitterMs <= 0) return 0;
  // one fire asks for its offset up to three times (its wake, its claim, `remove()`): the
  // trigger step and the SHA-256 are paid once
  const last = lastOffsets.get(job);
  if (last?.fireAt === fireAt) return last.offset;
  const offset = computeOffset(job, fireAt);
  lastOffsets.set(job, { fireAt, offset });
  return offset;
}

/** The last offset computed per job (its newest fire). */
const lastOffsets = new WeakMap<object, { fireAt: number; offset: number }>();

function computeOffset(
  job: { readonly name: string; readonly trigger: Trigger; readonly jitterMs: number },
  fireAt: number,
): number {
  let bound = job.jitterMs;
  try {
    const next = job.trigger.next(new Date(fireAt));
    if (next !== null) bound = Math.min(bound, next.getTime() - fireAt - 1);
  } catch {
    return 0;
  }
  if (!(bound > 0)) return 0;
  const digest = createHash('sha256').update(`${job.name}\u0000${fireAt}`, 'utf8').digest();
  return Math.floor((digest.readUInt32BE(0) / 0x1_0000_0000) * bound);
}
