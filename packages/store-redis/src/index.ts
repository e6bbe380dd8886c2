export { assertPrefix, encodeKeyPart, type RedisClient } from '@fleetcron/redis-shared';
export * from './keys.js';
export * from './redis-store.js';
