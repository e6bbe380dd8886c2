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
 *
 * `run` gets a signal that is aborted when the operation times out or when `signal` (the
 * caller's) is aborted: scripts run with it (see `RedisScript.run`) can no longer take effect
 * after that, even if they still sit in the client's offline queue.
 */
export async function callRedis<T>(
  operation: string,
  timeoutMs: number,
  run: (signal: AbortSignal) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const timedOut = new AbortController();
  const combined = signal ? AbortSignal.any([signal, timedOut.signal]) : timedOut.signal;
  try {
    if (signal?.aborted) throw new Error(`redis ${operation} was given up on before it was sent`);
    return await withTimeout(run(combined), timeoutMs, `redis ${operation}`);
  } catch (error) {
    timedOut.abort();
    throw new BackendUnavailableError('redis', operation, error);
  }
}
