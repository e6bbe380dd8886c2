import { RedisLock } from '@fleetcron/lock-redis';
import { RedisStore } from '@fleetcron/store-redis';
import { startRedisSentinel, waitFor } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { CHAOS_NAMESPACE, type ChaosBackend, failoverOnly } from '../backends.js';
import { monoNow } from '../ledger.js';

/** The address an instance is given: the group name, then the Sentinels (`name@h:p,h:p,...`). */
function sentinelClient(address: string): Redis {
  const [name, list] = address.split('@') as [string, string];
  const sentinels = list.split(',').map((hostPort) => {
    const [host, port] = hostPort.split(':') as [string, string];
    return { host, port: Number(port) };
  });
  const client = new Redis({ sentinels, name });
  // reconnects by itself (asking the Sentinels again); an 'error' event must never crash
  client.on('error', () => {});
  return client;
}

/**
 * Redis primary + replica + 3 Sentinels (`down-after-milliseconds` 1000): each instance opens an
 * ioredis Sentinel client with `RedisLock` + `RedisStore` on it. The failover SIGKILLs the primary
 * and waits until a quorum of Sentinels names the replica; the heal restarts the killed node
 * (empty: no persistence) as a replica of the promoted one (`REPLICAOF`, as an operator would;
 * the Sentinels' own conversion comes about 8 s later). Replication is asynchronous: duplicates
 * are possible by design (the lock's README), and measured here.
 */
export const topology: ChaosBackend = {
  faults: ['failover'],
  async startServer() {
    const ha = await startRedisSentinel();
    const address = `${ha.name}@${ha.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}`;
    const admins: Redis[] = [];
    let killed: 0 | 1 | undefined;
    return {
      address,
      restart: failoverOnly,
      dropConnections: failoverOnly,
      async failover() {
        const primary = await ha.primary();
        await ha.kill(primary);
        const killedAt = monoNow();
        killed = primary;
        await waitFor(async () => (await ha.primary()) !== primary, {
          timeoutMs: 30_000,
          message: 'the Sentinels promoting the replica',
        });
        const promoted = ha.nodes[primary === 0 ? 1 : 0];
        return {
          killed: `primary :${ha.nodes[primary].port} (replica :${promoted.port} promoted)`,
          killedAt,
        };
      },
      async heal() {
        if (killed === undefined) return;
        const returning = killed;
        await ha.start(returning);
        killed = undefined;
        const admin = new Redis(ha.nodes[returning]);
        admin.on('error', () => {});
        admins.push(admin);
        const promoted = ha.nodes[returning === 0 ? 1 : 0];
        await admin.call('REPLICAOF', promoted.host, String(promoted.port));
        await waitFor(
          async () => (await admin.info('replication')).includes('master_link_status:up'),
          { timeoutMs: 30_000, message: 'the returning node replicating the promoted primary' },
        );
      },
      async openStore() {
        const reader = sentinelClient(address);
        return {
          store: new RedisStore(reader, { prefix: CHAOS_NAMESPACE }),
          close: async () => {
            reader.disconnect();
          },
        };
      },
      async close() {
        for (const admin of admins) admin.disconnect();
        await ha.close();
      },
    };
  },
  async connect(address) {
    const redis = sentinelClient(address);
    return {
      lock: new RedisLock(redis, { prefix: CHAOS_NAMESPACE }),
      store: new RedisStore(redis, { prefix: CHAOS_NAMESPACE }),
      close: async () => {
        redis.disconnect();
      },
    };
  },
};
