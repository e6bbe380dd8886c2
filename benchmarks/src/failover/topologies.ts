/**
 * The HA topologies of the failover scenario, each with its fault: built on `@fleetcron/testkit`
 * (`src/ha/`), connected the way each adapter's README says for HA, shaped as conformance's
 * `FailoverTopology` so `runFailover` drives them.
 */
import { randomUUID } from 'node:crypto';
import type { FailoverTopology } from '@fleetcron/conformance';
import { EtcdLock } from '@fleetcron/lock-etcd';
import { PostgresLock } from '@fleetcron/lock-postgres';
import { RedisLock, type ReplicaAckOptions } from '@fleetcron/lock-redis';
import {
  startEtcdCluster,
  startPostgresReplicated,
  startRedisSentinel,
  startStallLink,
  waitFor,
} from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ETCD_ELECTION_TIMEOUT_MS, type FailoverTopologyName } from './cases.js';

/** `replicaAck` of the acknowledged Redis case, as measured in docs/performance/failover.md. */
const REPLICA_ACK: ReplicaAckOptions = { replicas: 1, timeoutMs: 250 };

/** etcd: 3 members; each lock on an Etcd3 client given every member's endpoint; leader SIGKILLed. */
async function etcdCluster(): Promise<FailoverTopology> {
  const cluster = await startEtcdCluster({ electionTimeoutMs: ETCD_ELECTION_TIMEOUT_MS });
  const prefix = `failover/${randomUUID()}/`;
  const opened: { lock: EtcdLock; client: Etcd3 }[] = [];
  return {
    async newLock() {
      const client = new Etcd3({ hosts: [...cluster.endpoints] });
      const lock = new EtcdLock(client, { prefix });
      opened.push({ lock, client });
      return lock;
    },
    async fail() {
      await cluster.kill(await cluster.leader());
    },
    async close() {
      for (const { lock, client } of opened) {
        await lock.close().catch(() => {});
        client.close();
      }
      await cluster.close();
    },
  };
}

/**
 * PostgreSQL primary + streaming standby behind one address (a testkit StallLink standing in for
 * a virtual IP); the primary SIGKILLed, the standby promoted, the address moved to it.
 */
async function postgresReplicated(synchronous: boolean): Promise<FailoverTopology> {
  const pair = await startPostgresReplicated({ synchronous });
  const address = await startStallLink({ port: pair.ports[0] });
  const url = `postgres://postgres@127.0.0.1:${address.port}/postgres`;
  const schema = 'failover';
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  admin.on('error', () => {});
  try {
    await new PostgresLock(admin, { schema }).migrate();
  } finally {
    await admin.end();
  }
  const pools: pg.Pool[] = [];
  return {
    async newLock() {
      const pool = new pg.Pool({ connectionString: url, max: 4, keepAlive: true });
      pool.on('error', () => {});
      pools.push(pool);
      return new PostgresLock(pool, { schema });
    },
    async fail() {
      await pair.kill(0);
      await pair.promote();
      address.moveTo({ port: pair.ports[1] });
    },
    async close() {
      await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
      await address.close();
      await pair.close();
    },
  };
}

/**
 * Redis primary + replica + 3 Sentinels, each lock on an ioredis Sentinel client; the primary
 * SIGKILLed, and restarted (empty) as a replica of the promoted one as soon as a quorum of
 * Sentinels names it, as an operator would: with `replicaAck` no claim can succeed while the
 * promoted primary has no replica, so both cases are run the same way to compare them.
 * `repl-diskless-sync-delay 0` on both data nodes (Redis' default 5 s delays the returning
 * replica's sync, and with it every acknowledged claim).
 */
async function redisSentinel(replicaAck?: ReplicaAckOptions): Promise<FailoverTopology> {
  const ha = await startRedisSentinel();
  const prefix = `failover-${randomUUID()}`;
  const clients: Redis[] = [];
  const direct = (node: { host: string; port: number }) => {
    const client = new Redis(node);
    client.on('error', () => {});
    clients.push(client);
    return client;
  };
  for (const node of ha.nodes) await direct(node).config('SET', 'repl-diskless-sync-delay', '0');
  return {
    async newLock() {
      const client = new Redis({ sentinels: [...ha.sentinels], name: ha.name });
      client.on('error', () => {});
      clients.push(client);
      return new RedisLock(client, { prefix, replicaAck });
    },
    async fail() {
      const primary = await ha.primary();
      await ha.kill(primary);
      await waitFor(async () => (await ha.primary()) !== primary, {
        timeoutMs: 30_000,
        message: 'the Sentinels promoting the replica',
      });
      await ha.start(primary);
      const promoted = ha.nodes[primary === 0 ? 1 : 0];
      await direct(ha.nodes[primary]).call('REPLICAOF', promoted.host, String(promoted.port));
    },
    async close() {
      for (const client of clients) client.disconnect();
      await ha.close();
    },
  };
}

/** Starts `name`'s topology (servers from local binaries through the testkit). */
export function startTopology(name: FailoverTopologyName): Promise<FailoverTopology> {
  switch (name) {
    case 'etcd-cluster':
      return etcdCluster();
    case 'pg-sync':
      return postgresReplicated(true);
    case 'pg-async':
      return postgresReplicated(false);
    case 'redis-sentinel':
      return redisSentinel();
    case 'redis-sentinel-ack':
      return redisSentinel(REPLICA_ACK);
  }
}
