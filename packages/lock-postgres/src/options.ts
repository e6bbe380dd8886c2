import {
  assertPositiveMs,
  DEFAULT_WINDOW_MS,
  InvalidOptionError,
  type Logger,
  silentLogger,
} from '@fleetcron/core';

/** Options of {@link PostgresLock}. */
export interface PostgresLockOptions {
  /** Schema of the lock's tables. Created by `migrate()` when missing. Default `public`. */
  schema?: string;
  /**
   * Prefix of the lock's table names: `<table>_keys`, `<table>_claims`, `<table>_leases`.
   * Default `fleetcron`.
   */
  table?: string;
  /** Claim window in ms: fires older than `now - windowMs` are stale. Default 5 minutes. */
  windowMs?: number;
  /**
   * Bound on one operation (getting a connection, the statement, internal retries), in ms.
   * When it passes, the operation throws `BackendUnavailableError`. Default 5000.
   */
  statementTimeoutMs?: number;
  /**
   * `true`: run the lock's statements as named prepared statements, planned once per connection
   * (claims take a fraction of the time). Needs connections that keep session state: direct
   * connections, session-mode poolers, or PgBouncer 1.21+ with `max_prepared_statements`.
   * Default `false`: unnamed statements, safe behind any transaction-mode pooler.
   */
  preparedStatements?: boolean;
  /** Receives pool `'error'` events the lock handles (see README). Default: silent. */
  logger?: Logger;
}

/** Options after defaults and validation. */
export interface ResolvedLockOptions {
  schema: string;
  table: string;
  windowMs: number;
  statementTimeoutMs: number;
  preparedStatements: boolean;
  logger: Logger;
}

/** Longest table suffix the lock appends to `table` (`_claims`, `_leases`). */
const LONGEST_SUFFIX = '_claims'.length;
/** PostgreSQL truncates identifiers beyond this many bytes. */
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
export function resolveLockOptions(options: PostgresLockOptions = {}): ResolvedLockOptions {
  const resolved: ResolvedLockOptions = {
    schema: assertIdentifier('schema', options.schema ?? 'public'),
    table: assertIdentifier('table', options.table ?? 'fleetcron', LONGEST_SUFFIX),
    windowMs: options.windowMs ?? DEFAULT_WINDOW_MS,
    statementTimeoutMs: options.statementTimeoutMs ?? 5000,
    preparedStatements: options.preparedStatements ?? false,
    logger: options.logger ?? silentLogger,
  };
  assertPositiveMs('windowMs', resolved.windowMs);
  assertPositiveMs('statementTimeoutMs', resolved.statementTimeoutMs);
  if (typeof resolved.preparedStatements !== 'boolean') {
    throw new InvalidOptionError('preparedStatements', 'must be true or false.');
  }
  if (!Number.isInteger(resolved.windowMs)) {
    throw new InvalidOptionError(
      'windowMs',
      `must be a whole number of ms, got ${resolved.windowMs}.`,
    );
  }
  return resolved;
}
