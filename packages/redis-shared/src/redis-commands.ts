import { callRedis } from './call.js';
import type { GiveUpSignal } from './give-up-signal.js';
import { guardErrorEvents } from './guard-error-events.js';
import type { RedisClient } from './redis-client.js';

/**
 * An adapter's way to the user's client: guards the client against unhandled `'error'` events
 * (see {@link guardErrorEvents}) and runs each operation under the command timeout, turning every
 * failure into `BackendUnavailableError` (see {@link callRedis}).
 */
export class RedisCommands {
  /**
   * @param client The user's client; never closed here.
   * @param timeoutMs Longest wait for one operation, in ms (already validated).
   */
  constructor(
    readonly client: RedisClient,
    readonly timeoutMs: number,
  ) {
    guardErrorEvents(client);
  }

  /**
   * Runs `run` as operation `operation` (the name `BackendUnavailableError` reports). `run` gets
   * a signal aborted on timeout or when `signal` is aborted (see {@link callRedis}).
   */
  call<T>(
    operation: string,
    run: (signal: GiveUpSignal) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    return callRedis(operation, this.timeoutMs, run, signal);
  }
}
