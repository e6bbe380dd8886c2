import { InvalidOptionError, type Logger, silentLogger } from '@fleetcron/core';
import { assertPositiveMs } from '@fleetcron/core/backend';

/** Default of {@link StatementOptions.statementTimeoutMs}. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;

/** How an adapter runs its statements: the options both PostgreSQL adapters take. */
export interface StatementOptions {
  /** Bound on one operation, in ms. Default {@link DEFAULT_STATEMENT_TIMEOUT_MS}. */
  statementTimeoutMs?: number;
  /** `true`: named prepared statements. Default `false`. */
  preparedStatements?: boolean;
  /** Receives the pool `'error'` events the adapter handles. Default: silent. */
  logger?: Logger;
}

/** {@link StatementOptions} after defaults and validation. */
export interface ResolvedStatementOptions {
  statementTimeoutMs: number;
  preparedStatements: boolean;
  logger: Logger;
}

/**
 * Applies the defaults and validates (`statementTimeoutMs`, then `preparedStatements`); throws
 * `InvalidOptionError` naming the field.
 */
export function resolveStatementOptions(options: StatementOptions): ResolvedStatementOptions {
  const resolved: ResolvedStatementOptions = {
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    preparedStatements: options.preparedStatements ?? false,
    logger: options.logger ?? silentLogger,
  };
  assertPositiveMs('statementTimeoutMs', resolved.statementTimeoutMs);
  if (typeof resolved.preparedStatements !== 'boolean') {
    throw new InvalidOptionError('preparedStatements', 'must be true or false.');
  }
  return resolved;
}
