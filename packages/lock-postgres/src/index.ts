export * from './elector.js';
export { type PostgresElectorOptions, postgresElectorSchema } from './elector-schema.js';
export type { PostgresLockOptions } from './options.js';
export * from './postgres-lock.js';
export { type LockTables, lockTables, postgresLockSchema } from './schema.js';
