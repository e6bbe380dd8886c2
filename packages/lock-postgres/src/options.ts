import { InvalidOptionError, type Logger } from '@fleetcron/core';
import {
  assertNonNegativeMs,
  assertPositiveMs,
  DEFAULT_EARLY_TOLERANCE_MS,
  DEFAULT_WINDOW_MS,
} from '@fleetcron/core/backend';
import {
  type ResolvedStatementOptions,
  type ResolvedTableOptions,
  resolveStatementOptions,
  resolveTableOptions,
} from '@fleetcron/postgres-shared';

/** Options of {@link PostgresLock}. */
export interface PostgresLockOptions {
  /** Schema of the lock's tables. Created by `migrate()` when missing. Default `public`. */
  schema?: string;
  /**
   * Prefix of the lock's table names: `<table>_keys`, `<table>_claims` (and
   * the functions `<table>_claim`, `<table>_claim_many`).
   * Default `fleetcron`.
   */
  table?: string;
  /** Claim window in ms: fires older than `now - windowMs` are stale. Default 5 minutes. */
  windowMs?: number;
  /**
   * A claim for a fire more than this far ahead of the database's `now()` is refused `early`
   * (the scheduler claims it again when the fleet's clock reaches it), in whole ms. Default 250.
   */
  earlyToleranceMs?: number;
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
export interface ResolvedLockOptions extends ResolvedTableOptions, ResolvedStatementOptions {
  windowMs: number;
  earlyToleranceMs: number;
}

/** Longest suffix the lock appends to `table` (the batch claim function's). */
const LONGEST_SUFFIX = '_claim_many'.length;

/** Applies defaults to `options` and validates them; throws `InvalidOptionError` naming the field. */
export function resolveLockOptions(options: PostgresLockOptions = {}): ResolvedLockOptions {
  const tables = resolveTableOptions(options, LONGEST_SUFFIX);
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  assertPositiveMs('windowMs', windowMs);
  const earlyToleranceMs = options.earlyToleranceMs ?? DEFAULT_EARLY_TOLERANCE_MS;
  assertNonNegativeMs('earlyToleranceMs', earlyToleranceMs);
  if (!Number.isInteger(earlyToleranceMs)) {
    throw new InvalidOptionError(
      'earlyToleranceMs',
      `must be a whole number of ms, got ${earlyToleranceMs}.`,
    );
  }
  const resolved: ResolvedLockOptions = {
    ...tables,
    windowMs,
    earlyToleranceMs,
    ...resolveStatementOptions(options),
  };
  if (!Number.isInteger(resolved.windowMs)) {
    throw new InvalidOptionError(
      'windowMs',
      `must be a whole number of ms, got ${resolved.windowMs}.`,
    );
  }
  return resolved;
}
