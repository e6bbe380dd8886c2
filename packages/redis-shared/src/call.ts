import { assertPositiveMs, BackendUnavailableError } from '@fleetcron/core';
import { withTimeout } from './with-timeout.js';

/** Default `commandTimeoutMs` of both Redis adapters. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/**
 * `commandTimeoutMs` or {@link DEFAULT_COMMAND_TIMEOUT_MS} when undefined; throws
 * `InvalidOptionError('commandTimeoutMs')` unless it is a positive number of ms.
 */
export function resolveCommandTimeoutMs(commandTimeoutMs: number | undefined): number {
  const resolved = commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  assertPositiveMs('commandTimeoutMs', resolved);
  return resolved;
}

/**
 * Runs one adapter operation against Redis within `timeoutMs` (see {@link withTimeout}). Every
 * failure, timeouts included, becomes `BackendUnavailableError('redis', operation, cause)`.
 */
export async function callRedis<T>(
  operation: string,
  timeoutMs: number,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await withTimeout(run(), timeoutMs, `redis ${operation}`);
  } catch (error) {
    throw new BackendUnavailableError('redis', operation, error);
  }
}
