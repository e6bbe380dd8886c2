import { BackendUnavailableError } from '@fleetcron/core';
import { assertPositiveMs } from '@fleetcron/core/backend';
import { GiveUp, type GiveUpSignal } from './give-up-signal.js';

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
 * Runs one adapter operation against Redis within `timeoutMs`. Every failure, timeouts
 * included, becomes `BackendUnavailableError('redis', operation, cause)`; a late rejection of
 * the operation after the timeout is handled (never unhandled), and the timer is unref'd and
 * cleared when the operation settles.
 *
 * `run` gets a signal that is aborted when the operation times out or when `signal` (the
 * caller's) is aborted: scripts run with it (see `RedisScript.run`) can no longer take effect
 * after that, even if they still sit in the client's offline queue.
 *
 * This is on the path of every claim, so it allocates little: one {@link GiveUp}, one timer, one
 * promise (no `AbortController` or `AbortSignal.any`: the caller's signal gives the call up
 * through a listener that is removed when the operation settles).
 */
export function callRedis<T>(
  operation: string,
  timeoutMs: number,
  run: (signal: GiveUpSignal) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  if (signal?.aborted) {
    return Promise.reject(
      new BackendUnavailableError(
        'redis',
        operation,
        new Error(`redis ${operation} was given up on before it was sent`),
      ),
    );
  }
  const controller = new GiveUp();
  const abort = () => controller.abort();
  signal?.addEventListener('abort', abort, { once: true });
  return new Promise<T>((resolve, reject) => {
    const fail = (cause: unknown) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      controller.abort();
      reject(new BackendUnavailableError('redis', operation, cause));
    };
    const timer = setTimeout(
      () =>
        fail(new Error(`redis ${operation} timed out after ${timeoutMs} ms (commandTimeoutMs)`)),
      timeoutMs,
    );
    timer.unref();
    let running: Promise<T>;
    try {
      running = run(controller);
    } catch (error) {
      fail(error);
      return;
    }
    running.then((value) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      resolve(value);
    }, fail);
  });
}
