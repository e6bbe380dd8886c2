export {
  assertPrefix,
  DEFAULT_COMMAND_TIMEOUT_MS,
  encodeKeyPart,
  type RedisClient,
} from '@fleetcron/redis-shared';
export type { DurabilityReport } from './durability.js';
export * from './elector.js';
export * from './keys.js';
export { REDIS_MAX_BATCH, type RedisLockOptions } from './options.js';
export * from './redis-lock.js';
export { ReplicaAckError, type ReplicaAckOptions } from './replica-ack.js';
