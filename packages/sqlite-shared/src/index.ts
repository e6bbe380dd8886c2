export { isBusy, retryBusy } from './busy-retry.js';
export { openConnection, tuneConnection, WAL_MODE_ERROR, WalModeError } from './connection.js';
export type {
  SqliteDatabase,
  SqliteRunResult,
  SqliteStatement,
  SqliteTransaction,
} from './database.js';
export {
  DRIVER_PACKAGE,
  DRIVER_RANGE,
  DriverLoadError,
  loadDriver,
  type SqliteDriver,
} from './driver.js';
export { SqliteDriverError, unavailable } from './errors.js';
export { InlineExecutor, type SqliteExecutor } from './executor.js';
export type { ConnectionSettings, SqliteOperation, SqliteOperations } from './protocol.js';
export {
  DEFAULT_BUSY_TIMEOUT_MS,
  resolveSource,
  type SqliteSource,
  type SqliteSourceOptions,
} from './source.js';
export { statementCache } from './statement-cache.js';
export { type OperationsModule, WorkerExecutor } from './worker-executor.js';
