import { InvalidOptionError } from '../../errors.js';
import type { Trigger } from '../../trigger.js';

/** When a job may fire: no fire before `startAt`, none after `endAt` (epoch ms, `null`: open). */
export interface JobWindow {
  readonly startAt: number | null;
  readonly endAt: number | null;
}

/** A time option of a job (`startAt`, `endAt`): a Date or epoch ms, checked. */
function checkTime(field: 'startAt' | 'endAt', value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const time = value instanceof Date ? value.getTime() : value;
  if (typeof time !== 'number' || !Number.isFinite(time)) {
    throw new InvalidOptionError(
      field,
      `must be a Date holding a valid time or epoch milliseconds, got ${value instanceof Date ? 'an Invalid Date' : JSON.stringify(value)}.`,
    );
  }
  return time;
}

/**
 * Checks a job's `startAt` and `endAt`: each a valid Date or epoch ms, `startAt` before `endAt`.
 * @throws InvalidOptionError naming the field.
 */
export function checkWindow(startAt: unknown, endAt: unknown): JobWindow {
  const window = { startAt: checkTime('startAt', startAt), endAt: checkTime('endAt', endAt) };
  if (window.startAt !== null && window.endAt !== null && window.endAt < window.startAt) {
    throw new InvalidOptionError(
      'endAt',
      `must not be before startAt (${new Date(window.startAt).toISOString()}), got ${new Date(window.endAt).toISOString()}.`,
    );
  }
  return window;
}

/**
 * `trigger` limited to `window`: its fires at or after `startAt` and at or before `endAt` (then
 * no more fires: the job is done, as an `at()` that passed). The trigger itself when the window is
 * open. The limited trigger keeps the inner one's `spec` and `tz` (the job's zone).
 */
export function withinWindow(trigger: Trigger, window: JobWindow): Trigger {
  const { startAt, endAt } = window;
  if (startAt === null && endAt === null) return trigger;
  const bounds = [
    startAt === null ? null : `from ${new Date(startAt).toISOString()}`,
    endAt === null ? null : `until ${new Date(endAt).toISOString()}`,
  ].filter((b) => b !== null);
  const limited: Trigger & { tz?: string } = {
    next(after: Date): Date | null {
      const from = startAt !== null && after.getTime() < startAt ? new Date(startAt - 1) : after;
      const next = trigger.next(from);
      return next !== null && endAt !== null && next.getTime() > endAt ? null : next;
    },
    describe: () => `${trigger.describe()} ${bounds.join(' ')}`,
    ...(trigger.spec ? { spec: trigger.spec } : {}),
  };
  const tz = (trigger as { tz?: unknown }).tz;
  if (typeof tz === 'string') limited.tz = tz;
  return limited;
}
