/**
 * Opens this package's clients in a fleet scenario's child process (the conformance suite's
 * `ProcessClient`): the child calls PostgreSQL on a pool of its own, not through the test process.
 */

import { PostgresStore } from '@fleetcron/store-postgres';
import pg from 'pg';
import { PostgresLock, type PostgresLockOptions } from '../src/index.js';

/** What a child needs to open a client on a fixture's schema. */
export interface PostgresProcessConfig {
  url: string;
  schema: string;
  /** Lock options beyond the schema (the fixture's `extra`). */
  lock?: Omit<PostgresLockOptions, 'schema'>;
}

/** A pool of the child's own (the lock and the store attach their own error listeners). */
const pool = (url: string) => new pg.Pool({ connectionString: url, max: 4 });

/** A `PostgresLock` on the fixture's schema. */
export function openLock(config: PostgresProcessConfig): PostgresLock {
  return new PostgresLock(pool(config.url), { ...config.lock, schema: config.schema });
}

/** A `PostgresStore` on the fixture's schema. */
export function openStore(config: PostgresProcessConfig): PostgresStore {
  return new PostgresStore(pool(config.url), { schema: config.schema });
}
