/**
 * Opens this package's clients in a fleet scenario's child process (the conformance suite's
 * `ProcessClient`): the child calls Redis on a connection of its own, not through the test process.
 */
import { RedisStore } from '@fleetcron/store-redis';
import { Redis } from 'ioredis';
import { RedisLock, type RedisLockOptions } from '../src/index.js';

/** What a child needs to open a client on a fixture's prefix. */
export interface RedisProcessConfig {
  url: string;
  prefix: string;
  /** Lock options beyond the prefix (the fixture's). */
  lock?: Omit<RedisLockOptions, 'prefix' | 'windowMs'>;
}

/** A connection of the child's own; its errors are the adapter's to report (never unhandled). */
function client(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  redis.on('error', () => {});
  return redis;
}

/** A `RedisLock` on the fixture's prefix. */
export function openLock(config: RedisProcessConfig): RedisLock {
  return new RedisLock(client(config.url), { ...config.lock, prefix: config.prefix });
}

/** A `RedisStore` on the fixture's prefix. */
export function openStore(config: RedisProcessConfig): RedisStore {
  return new RedisStore(client(config.url), { prefix: config.prefix });
}
