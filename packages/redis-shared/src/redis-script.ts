import { createHash } from 'node:crypto';
import { sendAbortable, type WriteTrace } from './abortable-command.js';
import { GiveUp, type GiveUpSignal } from './give-up-signal.js';
import type { RedisClient } from './redis-client.js';

const isNoScript = (error: unknown): boolean =>
  error instanceof Error && error.message.startsWith('NOSCRIPT');

/** A signal that is never aborted, for runs without one. */
const NEVER: GiveUpSignal = new GiveUp();

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

  /**
   * Runs the script with `keys` (all in one hash slot) and `args`. Once `signal` is aborted the
   * script can no longer run: not from the client's offline queue, not as a re-send after a
   * reconnect (see `AbortableCommand`); it rejects with `CommandAbortedError` instead, unless it
   * was already written to the server (then its reply is awaited). `trace`, when given, records the
   * connection the script was last written to (the `EVAL` fallback's, when it was needed).
   */
  run(
    client: RedisClient,
    keys: string[],
    args: (string | number)[],
    signal: GiveUpSignal = NEVER,
    trace?: WriteTrace,
  ): Promise<unknown> {
    const command: string[] = [this.sha, String(keys.length)];
    for (const key of keys) command.push(key);
    for (const arg of args) command.push(typeof arg === 'string' ? arg : String(arg));
    return sendAbortable(client, 'evalsha', command, signal, trace).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      command[0] = this.source;
      return sendAbortable(client, 'eval', command, signal, trace);
    });
  }
}
