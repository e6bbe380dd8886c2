import type { Cluster, Redis } from 'ioredis';

/** The ioredis clients the adapters accept: a single node (or Sentinel) client or a Cluster. */
export type RedisClient = Redis | Cluster;
