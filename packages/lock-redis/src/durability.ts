import { InvalidOptionError } from '@fleetcron/core';
import type { RedisClient, RedisCommands } from '@fleetcron/redis-shared';

/** What {@link RedisLock.verifyDurability} found on the server (each primary, for a Cluster). */
export interface DurabilityReport {
  /** `true` when every node runs `appendonly yes` and `appendfsync always`. */
  durable: boolean;
  /** `appendonly` / `appendfsync` per node, in the order the client lists them. */
  nodes: { appendonly: string; appendfsync: string }[];
}

/**
 * Reads `appendonly` and `appendfsync` with `CONFIG GET` (on every primary of a Cluster). When
 * `declared` (the lock was built with `durable: true`) and the server is not configured for it,
 * throws {@link InvalidOptionError} naming `durable`. Throws `BackendUnavailableError` when the
 * server cannot be asked (unreachable, or `CONFIG` disabled as on some managed services).
 */
export async function verifyDurability(
  redis: RedisClient,
  commands: RedisCommands,
  declared: boolean,
): Promise<DurabilityReport> {
  const clients: RedisClient[] = 'nodes' in redis ? redis.nodes('master') : [redis];
  const nodes = await Promise.all(
    clients.map(async (client) => {
      const reply = (await commands.call('verifyDurability', () =>
        client.config('GET', 'append*'),
      )) as string[];
      const config = new Map<string, string>();
      for (let i = 0; i + 1 < reply.length; i += 2) config.set(reply[i]!, reply[i + 1]!);
      return {
        appendonly: config.get('appendonly') ?? '',
        appendfsync: config.get('appendfsync') ?? '',
      };
    }),
  );
  const durable =
    nodes.length > 0 && nodes.every((n) => n.appendonly === 'yes' && n.appendfsync === 'always');
  if (declared && !durable) {
    throw new InvalidOptionError(
      'durable',
      `the lock was declared durable but the server runs ${nodes
        .map((n) => `appendonly ${n.appendonly}, appendfsync ${n.appendfsync}`)
        .join(
          '; ',
        )}. Run Redis with "appendonly yes" and "appendfsync always", or drop durable: true.`,
    );
  }
  return { durable, nodes };
}
