import { assertIdentifier } from './identifier.js';

/** Where an adapter keeps its tables: the options both PostgreSQL adapters take. */
export interface TableOptions {
  /** Schema of the tables. Default `public`. */
  schema?: string;
  /** Prefix of the table names. Default `fleetcron`. */
  table?: string;
}

/** {@link TableOptions} after defaults and validation. */
export interface ResolvedTableOptions {
  schema: string;
  table: string;
}

/**
 * Applies the defaults (`public`, `fleetcron`) and checks both are plain identifiers (schema
 * first, then table); `longestSuffix` is the longest suffix the adapter appends to `table`.
 * Throws `InvalidOptionError` naming the field.
 */
export function resolveTableOptions(
  options: TableOptions,
  longestSuffix: number,
): ResolvedTableOptions {
  return {
    schema: assertIdentifier('schema', options.schema ?? 'public'),
    table: assertIdentifier('table', options.table ?? 'fleetcron', longestSuffix),
  };
}
