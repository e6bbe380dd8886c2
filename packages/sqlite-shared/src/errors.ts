import { BackendUnavailableError } from '@fleetcron/core';
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
  const cause = new Error(code ? `${code}: ${message}` : `${name}: ${message}`);
  return new BackendUnavailableError(backend, operation, cause);
}

/** The error for a request whose `AbortSignal` fired before it ran: it was never sent. */
export function abortedBeforeSend(backend: string, operation: string): BackendUnavailableError {
  return new BackendUnavailableError(
    backend,
    operation,
    new Error(
      'the claim was aborted by the caller (deadline passed) before it ran; nothing was written',
    ),
  );
}
