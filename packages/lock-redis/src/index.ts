export {
  assertPrefix,
  DEFAULT_COMMAND_TIMEOUT_MS,
  encodeKeyPart,
  type RedisClient,
} from '@fleetcron/redis-shared';
export * from './elector.js';
export * from './keys.js';
export * from './redis-lock.js';
