import { InvalidOptionError } from '@fleetcron/core';
import type { Pool } from 'pg';

/** Throws `InvalidOptionError('pool')` unless `pool` looks like a `pg.Pool`. */
export function assertPool(pool: unknown): asserts pool is Pool {
  if (!pool || typeof (pool as Partial<Pool>).connect !== 'function') {
    throw new InvalidOptionError('pool', 'must be a pg.Pool.');
  }
}
