export { type SqliteDatabase, SqliteDriverError } from '@fleetcron/sqlite-shared';
export { type HistoryArgs, storeOperations } from './operations.js';
export { SQLITE_STORE_SCHEMA, STORE_STATUSES } from './schema.js';
export { SQLITE_SCHEDULE_POLL_MS, SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
