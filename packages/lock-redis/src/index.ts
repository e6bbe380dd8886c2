export * from './keys.js';
export * from './redis-lock.js';
export type { RedisClient } from './redis-script.js';
