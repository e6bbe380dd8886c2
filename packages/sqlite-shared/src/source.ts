import { InvalidOptionError } from '@fleetcron/core';
import type Libsql from 'libsql';
import { tuneConnection, WalModeError } from './connection.js';
import type { SqliteDatabase } from './database.js';
import { DriverLoadError, loadDriver } from './driver.js';
import { SqliteDriverError } from './errors.js';
import { InlineExecutor, type SqliteExecutor } from './executor.js';
import type { ConnectionSettings, SqliteOperations } from './protocol.js';
import { type OperationsModule, WorkerExecutor } from './worker-executor.js';

/** Default `busy_timeout`, ms: how long a write waits for another process's write lock. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Where an adapter's data lives: a file path (the adapter owns its connection) or your `Database`. */
export type SqliteSource = string | Libsql.Database | SqliteDatabase;

/** Connection options shared by the SQLite lock and store. */
export interface SqliteSourceOptions {
  /** `busy_timeout` in ms. Default 5000. Past it a write throws `BackendUnavailableError`. */
  busyTimeoutMs?: number;
  /** `synchronous` pragma: `FULL` (default, survives power loss) or `NORMAL` (survives a crash). */
  synchronous?: 'FULL' | 'NORMAL';
}

/**
 * Builds the executor of an adapter: for a file path, a worker thread with its own connection
 * (the adapter owns and closes it); for a `Database`, the caller's thread on that connection
 * (tuned to WAL and `busy_timeout`, never closed by the adapter).
 */
export function resolveSource(
  source: SqliteSource,
  options: SqliteSourceOptions,
  operations: { module: OperationsModule; set: SqliteOperations },
  backend: string,
): { executor: SqliteExecutor; settings: ConnectionSettings } {
  const settings: ConnectionSettings = {
    busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    synchronous: options.synchronous ?? 'FULL',
  };
  if (!(Number.isInteger(settings.busyTimeoutMs) && settings.busyTimeoutMs >= 0)) {
    throw new InvalidOptionError('busyTimeoutMs', 'must be a non-negative integer of ms.');
  }
  if (settings.synchronous !== 'FULL' && settings.synchronous !== 'NORMAL') {
    throw new InvalidOptionError('synchronous', "must be 'FULL' or 'NORMAL'.");
  }
  if (typeof source === 'string') {
    if (source === '' || source === ':memory:') {
      throw new InvalidOptionError(
        'database',
        'an in-memory database is private to one connection: pass a file path shared by your processes (or MemoryLock/MemoryStore for one process).',
      );
    }
    requireDriver();
    return {
      executor: new WorkerExecutor(source, settings, operations.module, backend),
      settings,
    };
  }
  const db: unknown = source;
  if (!isDatabase(db)) {
    throw new InvalidOptionError(
      'database',
      "must be a file path or a libsql Database (import Database from 'libsql'; new Database(path)).",
    );
  }
  if (!db.open) throw new InvalidOptionError('database', 'the Database is closed.');
  try {
    tuneConnection(db, settings);
  } catch (error) {
    if (error instanceof WalModeError) throw new InvalidOptionError('database', error.message);
    throw error;
  }
  return {
    executor: new InlineExecutor(db, operations.set, backend, false, settings.busyTimeoutMs),
    settings,
  };
}

/**
 * Loads the driver now, in the constructor, so a missing or unloadable `libsql` is a
 * {@link SqliteDriverError} at construction (the worker thread loads the same module later).
 */
function requireDriver(): void {
  try {
    loadDriver();
  } catch (error) {
    if (error instanceof DriverLoadError) throw new SqliteDriverError(error.message, error.cause);
    throw error;
  }
}

function isDatabase(value: unknown): value is SqliteDatabase {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as SqliteDatabase).prepare === 'function' &&
    typeof (value as SqliteDatabase).transaction === 'function'
  );
}
