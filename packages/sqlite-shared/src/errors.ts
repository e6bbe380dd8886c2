import { BackendUnavailableError, FleetcronError } from '@fleetcron/core';
import type { WorkerFailure } from './protocol.js';

/**
 * Wraps a driver failure as the typed error every adapter throws: `SQLITE_BUSY` past
 * `busy_timeout`, `SQLITE_IOERR`, `SQLITE_CORRUPT`, `SQLITE_CANTOPEN`, a crashed worker, ... all
 * become {@link BackendUnavailableError}, so the scheduler fails closed (skips, records why).
 */
export function unavailable(
  backend: string,
  operation: string,
  failure: WorkerFailure | unknown,
): BackendUnavailableError {
  if (failure instanceof BackendUnavailableError) return failure;
  if (failure instanceof Error) return new BackendUnavailableError(backend, operation, failure);
  const { code, message, name } = failure as WorkerFailure;
  return BackendUnavailableError.because(backend, operation, `${code ?? name}: ${message}`);
}

/**
 * The SQLite driver (`libsql`) is not installed, or its native binary for this platform is
 * missing or cannot be loaded. A setup error, thrown by the adapter's constructor (or `open()`),
 * never at fire time: no claim could ever succeed, so it must not look like a backend outage that
 * the scheduler rides out by skipping fires. The message names the package to install.
 */
export class SqliteDriverError extends FleetcronError {
  constructor(message: string, cause?: unknown) {
    super('DRIVER_LOAD_FAILED', `sqlite backend cannot start: ${message}`, { cause });
  }
}
