import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-client.js';

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
