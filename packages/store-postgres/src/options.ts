import {
  assertPositiveInteger,
  assertPositiveMs,
  DEFAULT_MAX_ERROR_LENGTH,
  InvalidOptionError,
  type Logger,
  silentLogger,
} from '@fleetcron/core';

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions {
  /** Schema of the store's tables. Created by `migrate()` when missing. Default `public`. */
  schema?: string;
  /** Prefix of the table names: `<table>_executions`, `<table>_jobs`. Default `fleetcron`. */
  table?: string;
  /** Longest stored error text, in characters (see `boundErrorText`). Default 8192. */
  maxErrorLength?: number;
  /**
   * Bound on one operation (getting a connection and the statement), in ms. When it passes, the
   * operation throws `BackendUnavailableError`. Default 5000.
   */
  statementTimeoutMs?: number;
  /**
   * `true`: run the store's statements as named prepared statements, planned once per
   * connection. Needs connections that keep session state: direct connections, session-mode
   * poolers, or PgBouncer 1.21+ with `max_prepared_statements`. Default `false`: unnamed
   * statements, safe behind any transaction-mode pooler.
   */
  preparedStatements?: boolean;
  /** Receives pool `'error'` events the store handles (see README). Default: silent. */
  logger?: Logger;
}

/** Options after defaults and validation. */
export interface ResolvedStoreOptions {
  schema: string;
  table: string;
  maxErrorLength: number;
  statementTimeoutMs: number;
  preparedStatements: boolean;
  logger: Logger;
}

/** Longest suffix appended to `table` (`_executions`, and the index names `_exec_history`). */
const LONGEST_SUFFIX = '_exec_history'.length;
const MAX_IDENTIFIER_BYTES = 63;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Throws {@link InvalidOptionError} unless `value` is a plain SQL identifier (letters, digits,
 * `_`, not starting with a digit) that stays within 63 bytes with `reserve` more characters.
 */
export function assertIdentifier(field: string, value: unknown, reserve = 0): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new InvalidOptionError(
      field,
      `must be a plain SQL identifier (letters, digits and _, not starting with a digit), got ${JSON.stringify(value)}.`,
    );
  }
  if (value.length + reserve > MAX_IDENTIFIER_BYTES) {
    throw new InvalidOptionError(
      field,
      `is too long: PostgreSQL identifiers hold ${MAX_IDENTIFIER_BYTES} bytes${reserve ? `, including the ${reserve}-character suffix the adapter appends` : ''}.`,
    );
  }
  return value;
}

/** Applies defaults to `options` and validates them; throws `InvalidOptionError` naming the field. */
export function resolveStoreOptions(options: PostgresStoreOptions = {}): ResolvedStoreOptions {
  const resolved: ResolvedStoreOptions = {
    schema: assertIdentifier('schema', options.schema ?? 'public'),
    table: assertIdentifier('table', options.table ?? 'fleetcron', LONGEST_SUFFIX),
    maxErrorLength: options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH,
    statementTimeoutMs: options.statementTimeoutMs ?? 5000,
    preparedStatements: options.preparedStatements ?? false,
    logger: options.logger ?? silentLogger,
  };
  assertPositiveInteger('maxErrorLength', resolved.maxErrorLength);
  assertPositiveMs('statementTimeoutMs', resolved.statementTimeoutMs);
  if (typeof resolved.preparedStatements !== 'boolean') {
    throw new InvalidOptionError('preparedStatements', 'must be true or false.');
  }
  return resolved;
}
