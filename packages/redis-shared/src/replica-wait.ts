import type { Redis } from 'ioredis';
import { sendAbortable, type WriteTrace } from './abortable-command.js';
import type { GiveUpSignal } from './give-up-signal.js';
import type { RedisClient } from './redis-client.js';

/**
 * What {@link waitForReplicas} found: how many replicas acknowledged, or that the connection the
 * writes went to is gone (a reconnect since, perhaps to another server after a failover), so
 * nothing can say whether any replica holds them.
 */
export type ReplicaWaitResult = { readonly acknowledged: number } | { readonly reconnected: true };

/**
 * Sends `WAIT replicas timeoutMs` on the connection that wrote `socket`'s commands (see
 * {@link WriteTrace}) and answers how many replicas acknowledged every write made on it so far.
 *
 * `WAIT` counts the replication offset of its own connection's writes only: asked on another
 * connection it would measure other writes, and asked on a fresh connection after a reconnect
 * (after a failover: on the promoted replica, which may never have had the writes) it answers at
 * once. So the connection is found by its socket: the client itself, or on a Cluster the primary
 * whose connection it is; when no connection of the client holds `socket` any more, or the `WAIT`
 * ends up written to another socket (queued while reconnecting), the answer is `reconnected`.
 * While the `WAIT` blocks, Redis runs no other command of that connection (up to `timeoutMs`).
 */
export async function waitForReplicas(
  client: RedisClient,
  socket: object,
  replicas: number,
  timeoutMs: number,
  signal: GiveUpSignal,
): Promise<ReplicaWaitResult> {
  const connection = connectionOf(client, socket);
  if (!connection) return { reconnected: true };
  const trace: WriteTrace = {};
  const reply = await sendAbortable(
    connection,
    'wait',
    [String(replicas), String(timeoutMs)],
    signal,
    trace,
  );
  if (trace.socket !== socket) return { reconnected: true };
  return { acknowledged: Number(reply) };
}

/** The connection of `client` whose socket is `socket` now, if any. */
function connectionOf(client: RedisClient, socket: object): Redis | undefined {
  if (client.isCluster) {
    // a claim, renewal or any other write of the lock runs on a primary
    return (client as { nodes(role: 'master'): Redis[] })
      .nodes('master')
      .find((node) => node.stream === socket);
  }
  const single = client as Redis;
  return single.stream === socket ? single : undefined;
}
