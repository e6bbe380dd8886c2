import { InvalidOptionError } from '../../errors.js';
import { MAX_SHARDS } from '../../shards/shard-info.js';
import type { CatchUpPolicy } from './job-policies.js';

/**
 * How a job's fires are split (`JobDefinition.shards`): a number n of parts, each claimed and
 * run exactly once fleet-wide (`ctx.shard = { index, count }`), or `'each'`: every live instance
 * runs the fire once (broadcast).
 */
export type ShardsOption = number | 'each';

/**
 * Checks `shards` (absent: `null`, a plain job): an integer from 1 to {@link MAX_SHARDS}, or
 * `'each'`. A sharded job needs a store with the fleet registry (the live instances place the
 * parts) and `catchUp: 'skip'` (missed sharded fires are not caught up). Typed errors naming
 * the field.
 */
export function checkShards(
  value: unknown,
  context: { hasRegistry: boolean; catchUp: CatchUpPolicy },
): ShardsOption | null {
  if (value === undefined || value === null) return null;
  if (value !== 'each' && !(Number.isInteger(value) && (value as number) >= 1)) {
    throw new InvalidOptionError(
      'shards',
      `must be a positive integer (the number of parts of each fire) or 'each' (every live instance runs the fire), got ${JSON.stringify(value)}.`,
    );
  }
  if (typeof value === 'number' && value > MAX_SHARDS) {
    throw new InvalidOptionError('shards', `must be at most ${MAX_SHARDS}, got ${value}.`);
  }
  if (!context.hasRegistry) {
    throw new InvalidOptionError(
      'shards',
      "a sharded job needs a store with the fleet registry (heartbeat, instances), which tells where the parts run: pass a built-in store (e.g. new MemoryStore(), PostgresStore) as the scheduler's store.",
    );
  }
  if (context.catchUp !== 'skip') {
    throw new InvalidOptionError(
      'catchUp',
      "missed fires of a sharded job are not caught up: use catchUp: 'skip' (the default) with shards.",
    );
  }
  return value as ShardsOption;
}
