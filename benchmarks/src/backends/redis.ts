import { RedisElector, RedisLock } from '@fleetcron/lock-redis';
import { RedisStore } from '@fleetcron/store-redis';
import { startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import Redlock from 'redlock';
import type { BackendModule, Claimer, Connection, OwnedLock } from './types.js';
import { BENCH_LEASE_MS, fleetcronClaimer } from './types.js';

/** The classic owner-checked release (what redlock's unlock does too). */
const RELEASE_LUA = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

async function connect(connection: Connection): Promise<Redis> {
  if (!connection.url) throw new Error('redis connection without url');
  const client = new Redis(connection.url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  client.on('error', () => {});
  await client.connect();
  return client;
}

const quit = async (client: Redis): Promise<void> => {
  await client.quit().catch(() => client.disconnect());
};

/**
 * Redis: `RedisLock` (one EVALSHA per claim) against the floor `SET k owner NX PX` (+ Lua
 * owner-checked `DEL` as release) and the peer redlock 4 (`retryCount: 0`, lock + unlock).
 */
export const redisBackend: BackendModule = {
  name: 'redis',
  floorName: 'SET k owner NX PX (+ Lua owner-checked DEL)',
  peerName: 'redlock 4.2.0 lock(resource, ttl) + unlock, retryCount 0',
  async start() {
    const server = await startRedis();
    return {
      name: 'redis',
      connection: { url: server.url, namespace: 'bench' },
      version: server.version,
      strategy: server.strategy,
      close: () => server.close(),
    };
  },
  async lock(connection): Promise<OwnedLock> {
    const client = await connect(connection);
    const lock = new RedisLock(client, { prefix: connection.namespace });
    const elector = () => new RedisElector(client, { prefix: connection.namespace });
    return { lock, elector, close: () => quit(client) };
  },
  store: {
    async prepare() {},
    async open(connection) {
      const client = await connect(connection);
      return {
        store: new RedisStore(client, { prefix: `${connection.namespace}:store` }),
        close: () => quit(client),
      };
    },
  },
  async claimer(connection, variant, owner): Promise<Claimer> {
    if (variant === 'fleetcron') return fleetcronClaimer(await this.lock(connection), owner);
    const client = await connect(connection);
    const close = () => quit(client);
    if (variant === 'floor') {
      const prefix = `${connection.namespace}:floor:`;
      return {
        async claim(key, fireAt) {
          const id = `${prefix}${key}:${fireAt}`;
          const ok = await client.set(id, owner, 'PX', BENCH_LEASE_MS, 'NX');
          if (ok !== 'OK') return { status: 'lost' };
          return { status: 'won', release: () => client.eval(RELEASE_LUA, 1, id, owner) };
        },
        close,
      };
    }
    const redlock = new Redlock([client], { retryCount: 0 });
    redlock.on('clientError', () => {});
    const prefix = `${connection.namespace}:redlock:`;
    return {
      async claim(key, fireAt) {
        let held: Redlock.Lock;
        try {
          held = await redlock.lock(`${prefix}${key}:${fireAt}`, BENCH_LEASE_MS);
        } catch (error) {
          // LockError: the resource is held (retryCount 0); anything else is a real failure.
          if ((error as Error).name === 'LockError') return { status: 'lost' };
          throw error;
        }
        return { status: 'won', release: () => held.unlock() };
      },
      close,
    };
  },
};
