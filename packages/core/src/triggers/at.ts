import { InvalidOptionError } from '../errors.js';
import type { Trigger } from '../trigger.js';
import { afterTime } from './after-time.js';

/**
 * Fires once, at `date` (a Date, epoch ms, or a string `Date` can parse; include a zone or `Z`
 * in strings, or the process zone is used). `next(after)` returns it while it is later than
 * `after`, then `null`. `next()` throws `InvalidOptionError` (field `after`) for an Invalid Date.
 *
 * @throws InvalidOptionError (field `at`) when `date` is not a valid time.
 */
export function at(date: Date | number | string): Trigger {
  const time =
    date instanceof Date
      ? date.getTime()
      : typeof date === 'number' || typeof date === 'string'
        ? new Date(date).getTime()
        : Number.NaN;
  if (!Number.isFinite(time)) {
    throw new InvalidOptionError(
      'at',
      `must be a valid Date, epoch ms or date string, got ${String(date)}.`,
    );
  }
  const description = `at(${new Date(time).toISOString()})`;
  return {
    next: (after: Date): Date | null =>
      afterTime(after, description) < time ? new Date(time) : null,
    describe: () => description,
    spec: { kind: 'at', at: time },
  };
}
