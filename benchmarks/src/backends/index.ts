import { etcdBackend } from './etcd.js';
import { memoryBackend } from './memory.js';
import { postgresBackend } from './postgres.js';
import { redisBackend } from './redis.js';
import { sqliteBackend } from './sqlite.js';
import type { BackendModule, BackendName } from './types.js';

/** Every backend module by name. */
export const backendModules: Record<BackendName, BackendModule> = {
  memory: memoryBackend,
  postgres: postgresBackend,
  redis: redisBackend,
  etcd: etcdBackend,
  sqlite: sqliteBackend,
};
