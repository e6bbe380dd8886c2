import { BackendUnavailableError, InvalidOptionError } from '@fleetcron/core';
import {
  type GiveUpSignal,
  type RedisCommands,
  type ReplicaWaitResult,
  waitForReplicas,
} from '@fleetcron/redis-shared';

/**
 * The `replicaAck` option of {@link RedisLock}: after a claim that won, and after a renewal, the
 * lock sends `WAIT replicas timeoutMs` on the connection that wrote it, and treats the call as
 * failed unless at least `replicas` replicas acknowledged in time.
 */
export interface ReplicaAckOptions {
  /** Replicas that must hold a won claim or a renewed lease before it counts; a whole number >= 1. */
  replicas: number;
  /**
   * Longest wait for them, whole ms >= 1 and below `commandTimeoutMs`. While a `WAIT` waits,
   * Redis runs no other command of that connection.
   */
  timeoutMs: number;
}

/**
 * A won claim or a renewal that fewer replicas than `replicaAck.replicas` acknowledged within
 * `replicaAck.timeoutMs`: the lock answers the call as failed (fail closed). A
 * `BackendUnavailableError` (code `BACKEND_UNAVAILABLE`), so the scheduler skips the fire as for
 * any backend failure; the won claims of that call were handed back (withdrawn) before it was
 * thrown.
 */
export class ReplicaAckError extends BackendUnavailableError {
  /** Replicas required (`replicaAck.replicas`). */
  readonly required: number;
  /** Fewest replicas that acknowledged on one connection; `null` when the connection was lost. */
  readonly acknowledged: number | null;

  constructor(operation: string, required: number, acknowledged: number | null, timeoutMs: number) {
    super(
      'redis',
      operation,
      undefined,
      acknowledged === null
        ? `the connection that wrote it was lost before replicas could acknowledge it (replicaAck), so it was not counted`
        : `${acknowledged} of ${required} replicas acknowledged the write within ${timeoutMs} ms (replicaAck), so it was not counted`,
    );
    this.required = required;
    this.acknowledged = acknowledged;
  }
}

/** Checks the `replicaAck` option (`InvalidOptionError` naming the field) against `commandTimeoutMs`. */
export function resolveReplicaAck(
  value: ReplicaAckOptions | undefined,
  commandTimeoutMs: number,
): ReplicaAckOptions | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError(
      'replicaAck',
      `must be an object { replicas, timeoutMs }, got ${String(value)}.`,
    );
  }
  const { replicas, timeoutMs } = value;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1) {
    throw new InvalidOptionError(
      'replicaAck.replicas',
      `must be a whole number >= 1 (replicas that must acknowledge each won claim), got ${String(replicas)}. Leave replicaAck out to claim without waiting for replicas.`,
    );
  }
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1) {
    throw new InvalidOptionError(
      'replicaAck.timeoutMs',
      `must be a whole number of ms >= 1 (WAIT 0 would wait forever), got ${String(timeoutMs)}.`,
    );
  }
  if (timeoutMs >= commandTimeoutMs) {
    throw new InvalidOptionError(
      'replicaAck.timeoutMs',
      `must be below commandTimeoutMs (${commandTimeoutMs}), got ${timeoutMs}: the WAIT runs within one call's time. Lower it, or raise commandTimeoutMs.`,
    );
  }
  return { replicas, timeoutMs };
}

/**
 * Asks for the acknowledgement of the writes made on `sockets` (the connections that wrote the
 * won claims or renewals of one call; one `WAIT` per connection, all at once), within the lock's
 * command timeout. Resolves when every connection has `replicas` acknowledgements; throws
 * {@link ReplicaAckError} otherwise (and `BackendUnavailableError` when the `WAIT` itself failed).
 */
export async function confirmReplicated(
  commands: RedisCommands,
  ack: ReplicaAckOptions,
  operation: string,
  sockets: Iterable<object | undefined>,
  signal?: AbortSignal,
): Promise<void> {
  const distinct = [...new Set(sockets)];
  const fewest = await commands.call(
    operation,
    async (giveUp: GiveUpSignal) => {
      const replies = await Promise.all(
        distinct.map((socket) =>
          socket === undefined
            ? RECONNECTED
            : waitForReplicas(commands.client, socket, ack.replicas, ack.timeoutMs, giveUp),
        ),
      );
      let least: number | null = Number.POSITIVE_INFINITY;
      for (const reply of replies) {
        if ('reconnected' in reply) least = null;
        else if (least !== null) least = Math.min(least, reply.acknowledged);
      }
      return least;
    },
    signal,
  );
  if (fewest === null || fewest < ack.replicas) {
    throw new ReplicaAckError(operation, ack.replicas, fewest, ack.timeoutMs);
  }
}

/** A write whose connection is unknown (it was never written): nothing can acknowledge it. */
const RECONNECTED: ReplicaWaitResult = { reconnected: true };
