export type { PostgresStoreOptions } from './options.js';
export * from './postgres-store.js';
export { postgresStoreSchema, type StoreTables, storeTables } from './schema.js';
