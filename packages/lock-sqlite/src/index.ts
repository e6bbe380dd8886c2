export { type SqliteDatabase, SqliteDriverError } from '@fleetcron/sqlite-shared';
export { type ClaimArgs, type ExtendArgs, lockOperations } from './operations.js';
export { SQLITE_LOCK_SCHEMA } from './schema.js';
export {
  SQLITE_LOCK_CAPABILITIES,
  SQLITE_MAX_BATCH,
  SqliteLock,
  type SqliteLockOptions,
} from './sqlite-lock.js';
