/**
 * Opens this package's clients in a fleet scenario's child process (the conformance suite's
 * `ProcessClient`): the child opens the fixture's SQLite file itself, as another process of the
 * fleet would.
 */
import { SqliteStore } from '@fleetcron/store-sqlite';
import { SqliteLock, type SqliteLockOptions } from '../src/index.js';

/** What a child needs to open a client on a fixture's file. */
export interface SqliteProcessConfig {
  file: string;
  /** Lock options (the fixture's `extra`). */
  lock?: Omit<SqliteLockOptions, 'windowMs'>;
}

/** A `SqliteLock` on the fixture's file, its worker started. */
export async function openLock(config: SqliteProcessConfig): Promise<SqliteLock> {
  const lock = new SqliteLock(config.file, config.lock ?? {});
  await lock.open();
  return lock;
}

/** A `SqliteStore` on the fixture's file, its worker started. */
export async function openStore(config: SqliteProcessConfig): Promise<SqliteStore> {
  const store = new SqliteStore(config.file);
  await store.open();
  return store;
}
