import type { RedisClient } from './redis-client.js';

const guarded = new WeakSet<object>();

/**
 * Attaches a no-op `'error'` listener to `client` when it has none, so a connection error can
 * never crash the process as an unhandled `'error'` event. Errors still reach the adapter as
 * rejected commands. A listener the user attaches (before or after) works as usual.
 */
export function guardErrorEvents(client: RedisClient): void {
  if (guarded.has(client) || client.listenerCount('error') > 0) return;
  guarded.add(client);
  client.on('error', () => {});
}
