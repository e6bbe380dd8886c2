import { type FleetcronEvent, publish } from '../events.js';
import type { Logger } from '../middleware.js';

type Level = keyof Logger;
const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

/**
 * Wraps a user logger so that a throwing logger never disturbs a fire, and attaches `fields`
 * (job name, fire time) to every line.
 */
export function safeLogger(logger: Logger, fields: Record<string, unknown> = {}): Logger {
  const wrapped = {} as Logger;
  for (const level of LEVELS) {
    wrapped[level] = (message, more) => {
      try {
        logger[level](message, more ? { ...fields, ...more } : { ...fields });
      } catch {
        // a faulty logger must never break a fire
      }
    };
  }
  return wrapped;
}

/** Publishes an event; a subscriber that throws never reaches the scheduler. */
export function safePublish(event: FleetcronEvent): void {
  try {
    publish(event);
  } catch {
    // diagnostics_channel subscribers registered without subscribe() may throw
  }
}

/** Calls `fn`, turning a synchronous throw into a rejection. */
export function safeCall<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error);
  }
}
