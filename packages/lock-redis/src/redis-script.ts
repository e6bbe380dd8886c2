import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** The ioredis clients the adapters accept: a single node (or Sentinel) client or a Cluster. */
export type RedisClient = Redis | Cluster;

const isNoScript = (error: unknown): boolean =>
  error instanceof Error && error.message.startsWith('NOSCRIPT');

/**
 * A Lua script run with `EVALSHA`, falling back to `EVAL` (which also loads it) when the server
 * answers `NOSCRIPT` (after a restart, `SCRIPT FLUSH` or on a new cluster node). One round trip
 * in the common case. Unlike `defineCommand`, it adds nothing to the user's client.
 */
export class RedisScript {
  /** SHA1 of the source, as `EVALSHA` expects it. */
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script with `keys` (all in one hash slot) and `args`. */
  async run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return await client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

/**
 * Settles like `promise`, or rejects after `ms` with a timeout error. The losing promise keeps
 * a handler (through `Promise.race`), so its late rejection is never unhandled; the timer is
 * unref'd and cleared, so it never keeps the process alive.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} timed out after ${ms} ms (commandTimeoutMs)`)),
      ms,
    );
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

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
