import { InvalidOptionError } from './errors.js';
import { assertPositiveInteger } from './validate.js';

/** Most executions one {@link PruneJobOptions.limit} may ask a store to delete in one call. */
export const MAX_PRUNE_JOB_LIMIT = 10_000;

/**
 * Options of `Store.pruneJob`: which executions of one job may go, and how many at most. An
 * execution may go when it is beyond the job's newest `keepLast` (by `(startedAt, id)`, every
 * status counted) OR started before `before`; one of the two is required. An execution still
 * `running` never goes. The oldest candidates go first, at most `limit` of them.
 */
export interface PruneJobOptions {
  /** Keep the job's newest `keepLast` executions (an integer >= 0; 0 keeps none by count). */
  keepLast?: number;
  /** Executions that started before this time (epoch ms) may go. */
  before?: number;
  /** Most executions deleted by this call: an integer from 1 to {@link MAX_PRUNE_JOB_LIMIT}. */
  limit: number;
}

/** {@link PruneJobOptions} checked, with `null` for a bound not given. */
export interface PruneJobBounds {
  keepLast: number | null;
  before: number | null;
  limit: number;
}

/**
 * Checks `pruneJob`'s arguments; throws `InvalidOptionError` naming the field (`job`,
 * `keepLast`, `before`, `limit`) and saying what to pass. Every store calls it before any
 * round trip, so bad input fails the same way everywhere.
 */
export function resolvePruneJob(job: unknown, options: PruneJobOptions): PruneJobBounds {
  if (typeof job !== 'string' || job.length === 0) {
    throw new InvalidOptionError('job', `must be a non-empty job name, got ${String(job)}.`);
  }
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('options', 'must be an object { keepLast?, before?, limit }.');
  }
  const { keepLast, before, limit } = options;
  if (keepLast !== undefined && (!Number.isSafeInteger(keepLast) || keepLast < 0)) {
    throw new InvalidOptionError(
      'keepLast',
      `must be an integer >= 0 (executions to keep), got ${String(keepLast)}.`,
    );
  }
  if (before !== undefined && (typeof before !== 'number' || !Number.isFinite(before))) {
    throw new InvalidOptionError('before', `must be an epoch ms number, got ${String(before)}.`);
  }
  if (keepLast === undefined && before === undefined) {
    throw new InvalidOptionError(
      'keepLast',
      'or before is required: say which executions may go (the newest n to keep, or a time).',
    );
  }
  assertPositiveInteger('limit', limit);
  if (limit > MAX_PRUNE_JOB_LIMIT) {
    throw new InvalidOptionError(
      'limit',
      `must be at most ${MAX_PRUNE_JOB_LIMIT} (bounded work per call), got ${limit}; call again for more.`,
    );
  }
  return { keepLast: keepLast ?? null, before: before ?? null, limit };
}
