import type { AuditRetention, Logger } from '@fleetcron/core';
import {
  AUDIT_PRUNE_BATCH,
  assertPositiveInteger,
  DEFAULT_MAX_ERROR_LENGTH,
  resolveAuditRetention,
} from '@fleetcron/core/backend';
import {
  type ResolvedStatementOptions,
  type ResolvedTableOptions,
  resolveStatementOptions,
  resolveTableOptions,
} from '@fleetcron/postgres-shared';

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
  /**
   * How much audit log to keep: the newest `maxEntries` (default 100,000) of at most `maxAgeMs`
   * (default 90 days, database clock); each append deletes at most 20 entries beyond the bounds.
   */
  audit?: AuditRetention;
}

/** Options after defaults and validation. */
export interface ResolvedStoreOptions extends ResolvedTableOptions, ResolvedStatementOptions {
  maxErrorLength: number;
  /** The audit log's bounds and the most entries one append deletes. */
  audit: Required<AuditRetention> & { batch: number };
}

/** Longest suffix appended to `table` (`_executions`, and the index names `_exec_history`). */
const LONGEST_SUFFIX = '_exec_history'.length;

/** Applies defaults to `options` and validates them; throws `InvalidOptionError` naming the field. */
export function resolveStoreOptions(options: PostgresStoreOptions = {}): ResolvedStoreOptions {
  const tables = resolveTableOptions(options, LONGEST_SUFFIX);
  const maxErrorLength = options.maxErrorLength ?? DEFAULT_MAX_ERROR_LENGTH;
  assertPositiveInteger('maxErrorLength', maxErrorLength);
  const audit = { ...resolveAuditRetention(options.audit), batch: AUDIT_PRUNE_BATCH };
  return { ...tables, maxErrorLength, audit, ...resolveStatementOptions(options) };
}
