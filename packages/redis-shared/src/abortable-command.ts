import { Command } from 'ioredis';
import type { GiveUpSignal } from './give-up-signal.js';
import type { RedisClient } from './redis-client.js';

/**
 * Where a command was written: the connection (socket) of its last write, set when ioredis writes
 * it (at once on a ready connection, later from the offline queue or as a re-send after a
 * reconnect). A `WAIT` only covers the writes of its own connection, so an acknowledgement by
 * replicas must be asked on this one (see {@link waitForReplicas}).
 */
export interface WriteTrace {
  /** The socket the command was last written to; unset while it was not written. */
  socket?: object;
}

/** What an {@link AbortableCommand} sends instead of itself once its signal is aborted. */
export const ABORTED_REPLY = 'fleetcron:aborted-before-sent';

/**
 * Thrown by {@link sendAbortable} when the command was given up on: `sentBefore` false, it never
 * ran; `sentBefore` true, it was written once before a reconnect and may or may not have run.
 */
export class CommandAbortedError extends Error {
  constructor(
    name: string,
    readonly sentBefore = false,
  ) {
    super(
      sentBefore
        ? `redis ${name} was given up on after it had been sent once; whether it ran is unknown`
        : `redis ${name} was given up on before it was sent; it was not run`,
    );
    this.name = 'CommandAbortedError';
  }
}

/**
 * An ioredis command that can no longer take effect once `signal` is aborted. ioredis keeps
 * commands in its offline queue while disconnected and re-sends unanswered ones after a
 * reconnect (`autoResendUnfulfilledCommands`); both paths serialise the command again when they
 * write it. This command checks its signal at that moment and, once aborted, writes a harmless
 * `ECHO` instead of itself, so a command given up on never runs later. Only a command already on
 * the wire (written before the abort, and not re-sent) can still run.
 */
export class AbortableCommand extends Command {
  /** Whether the real command (not the `ECHO`) has been written to a socket at least once. */
  written = false;
  /** Whether the command was turned into the `ECHO` (its reply is then {@link ABORTED_REPLY}). */
  neutralised = false;

  constructor(
    name: string,
    args: string[],
    options: { keyPrefix?: string; replyEncoding?: 'utf8' },
    private readonly signal: GiveUpSignal,
    private readonly trace?: WriteTrace,
  ) {
    super(name, args, options);
  }

  override toWritable(socket: object): string | Buffer {
    if (this.signal.aborted) {
      this.name = 'echo';
      this.args = [ABORTED_REPLY];
      this.neutralised = true;
    } else {
      this.written = true;
      if (this.trace) this.trace.socket = socket;
    }
    // biome-ignore lint/suspicious/noExplicitAny: ioredis declares the socket parameter loosely.
    return super.toWritable(socket as any);
  }
}

/**
 * Sends `name args` on `client` (applying the client's `keyPrefix`, replies as UTF-8 strings)
 * so that it cannot run once `signal` is aborted (see {@link AbortableCommand}). When the abort
 * comes before the command was written, rejects at once with {@link CommandAbortedError}; a
 * command already written is awaited (its answer may still matter to the caller). On a ready
 * connection ioredis writes the command before `sendCommand` returns: then no abort listener is
 * needed at all (the common, cheap case). `trace`, when given, records the connection the command
 * was written to (see {@link WriteTrace}).
 */
export function sendAbortable(
  client: RedisClient,
  name: string,
  args: string[],
  signal: GiveUpSignal,
  trace?: WriteTrace,
): Promise<unknown> {
  if (signal.aborted) return Promise.reject(new CommandAbortedError(name));
  const keyPrefix = client.options.keyPrefix;
  const command = new AbortableCommand(
    name,
    args,
    keyPrefix ? { replyEncoding: 'utf8', keyPrefix } : UTF8,
    signal,
    trace,
  );
  const sent = client.sendCommand(command) as Promise<unknown>;
  const settle = (reply: unknown) => {
    if (command.neutralised) throw new CommandAbortedError(name, command.written);
    return reply;
  };
  if (command.written) return sent.then(settle);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      if (!command.written) reject(new CommandAbortedError(name));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    sent.then(
      (reply) => {
        signal.removeEventListener('abort', onAbort);
        try {
          resolve(settle(reply));
        } catch (error) {
          reject(error);
        }
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

const UTF8 = { replyEncoding: 'utf8' } as const;
