import { randomUUID } from 'node:crypto';
import { type FailoverTopology, runFailoverConformance } from '@fleetcron/conformance';
import { startRedisSentinel } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { RedisLock } from '../src/index.js';

// Failover of Redis under Sentinel (#31): real schedulers claim 5 jobs every second on 3
// instances, each on an ioredis Sentinel client of its own; the primary is SIGKILLed and the
// Sentinels promote the replica. Judged from the ledger of runs. Replication is asynchronous, so
// duplicates are measured, not asserted (README, "Redis Cluster and Sentinel"); tokens must still
// increase per job and claims must come back.

async function topology(): Promise<FailoverTopology> {
  const ha = await startRedisSentinel();
  const prefix = `failover-${randomUUID()}`;
  const clients: Redis[] = [];
  let killed: 0 | 1 | undefined;
  return {
    async newLock() {
      const client = new Redis({ sentinels: [...ha.sentinels], name: ha.name });
      client.on('error', () => {});
      clients.push(client);
      return new RedisLock(client, { prefix });
    },
    async fail() {
      killed = await ha.primary();
      await ha.kill(killed);
    },
    async heal() {
      if (killed !== undefined) await ha.start(killed);
      killed = undefined;
    },
    async close() {
      for (const client of clients) client.disconnect();
      await ha.close();
    },
  };
}

runFailoverConformance({
  name: 'redis (Sentinel: primary, replica, 3 Sentinels)',
  cases: [
    {
      title: 'primary SIGKILLed, replica promoted by the Sentinels',
      topology,
      duplicates: 'measure',
      run: { afterMs: 10_000 },
    },
  ],
});
