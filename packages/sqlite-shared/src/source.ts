import { InvalidOptionError } from '@fleetcron/core';
import type Database from 'better-sqlite3';
import { tuneConnection } from './connection.js';
import { InlineExecutor, type SqliteExecutor } from './executor.js';
import type { ConnectionSettings, SqliteOperations } from './protocol.js';
import { type OperationsModule, WorkerExecutor } from './worker-executor.js';

/** Default `busy_timeout`, ms: how long a write waits for another process's write lock. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Where an adapter's data lives: a file path (the adapter owns its connection) or your `Database`. */
export type SqliteSource = string | Database.Database;

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
    return {
      executor: new WorkerExecutor(source, settings, operations.module, backend),
      settings,
    };
  }
  if (!isDatabase(source)) {
    throw new InvalidOptionError(
      'database',
      'must be a file path or a better-sqlite3 Database (new Database(path)).',
    );
  }
  if (!source.open) throw new InvalidOptionError('database', 'the Database is closed.');
  tuneConnection(source, settings);
  return {
    executor: new InlineExecutor(source, operations.set, backend, false, settings.busyTimeoutMs),
    settings,
  };
}

function isDatabase(value: unknown): value is Database.Database {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Database.Database).prepare === 'function' &&
    typeof (value as Database.Database).transaction === 'function'
  );
}
