export { type ClaimArgs, lockOperations } from './operations.js';
export { SQLITE_LOCK_SCHEMA } from './schema.js';
export { SQLITE_LOCK_CAPABILITIES, SqliteLock, type SqliteLockOptions } from './sqlite-lock.js';
