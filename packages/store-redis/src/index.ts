export * from './keys.js';
export type { RedisClient } from './redis-script.js';
export * from './redis-store.js';
