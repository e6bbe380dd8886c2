import { type StallLink, startStallLink, waitFor } from '@fleetcron/testkit';
import { Redis } from 'ioredis';

/**
 * Points the replica at the primary through a {@link StallLink} (`REPLICAOF` the link's port)
 * and waits until it replicates through it.
 */
export async function replicateThroughLink(
  nodes: readonly [{ host: string; port: number }, { host: string; port: number }],
  clients: Redis[],
): Promise<StallLink> {
  const link = await startStallLink(nodes[0]);
  const replica = new Redis(nodes[1]);
  replica.on('error', () => {});
  clients.push(replica);
  await replica.call('REPLICAOF', '127.0.0.1', String(link.port));
  await waitFor(
    async () => {
      const info = await replica.info('replication');
      return info.includes(`master_port:${link.port}`) && info.includes('master_link_status:up');
    },
    { timeoutMs: 15_000, message: 'the replica replicating through the stall link' },
  );
  return link;
}
