import { InvalidOptionError } from '../errors.js';
import type { Trigger } from '../trigger.js';
import { afterTime } from './after-time.js';

/** Options of {@link every}. */
export interface EveryOptions {
  /** The instant the grid is aligned to (Date or epoch ms). Default: the Unix epoch. */
  anchor?: Date | number;
}

/**
 * Fires every `ms` milliseconds on a fixed grid: at `anchor + k·ms` for whole `k`, strictly after
 * the time asked about. The grid does not depend on when a process started, so every instance
 * computes the same fires (`every(60_000)` fires at each whole UTC minute). `next()` throws
 * `InvalidOptionError` (field `after`) for an Invalid Date.
 *
 * @throws InvalidOptionError (field `every`) unless `ms` is a positive integer;
 *   (field `anchor`) unless the anchor is a valid Date or a finite integer.
 */
export function every(ms: number, options: EveryOptions = {}): Trigger {
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms <= 0) {
    throw new InvalidOptionError(
      'every',
      `must be a positive integer number of milliseconds, got ${String(ms)}.`,
    );
  }
  const raw = options.anchor ?? 0;
  const anchor = raw instanceof Date ? raw.getTime() : raw;
  if (typeof anchor !== 'number' || !Number.isSafeInteger(anchor)) {
    throw new InvalidOptionError(
      'anchor',
      `must be a valid Date or an integer epoch-ms time, got ${String(raw)}.`,
    );
  }
  const description =
    anchor === 0 ? `every(${ms}ms)` : `every(${ms}ms from ${new Date(anchor).toISOString()})`;
  return {
    next(after: Date): Date | null {
      const t = afterTime(after, description);
      return new Date(anchor + (Math.floor((t - anchor) / ms) + 1) * ms);
    },
    describe: () => description,
    spec: { kind: 'every', ms, anchor },
  };
}
