import type { Pool, QueryResultRow } from 'pg';
import { runMigration } from './migrate.js';
import { PgRunner, type RunOptions } from './pg-runner.js';
import { preparedName } from './prepared-name.js';
import type { ResolvedStatementOptions } from './statement-options.js';

/** A statement's text and, with prepared statements, its prepared-statement name. */
export interface Statement {
  text: string;
  name: string | undefined;
}

/**
 * An adapter's fixed statements, keyed by name, run on `pool` through one {@link PgRunner}
 * (which attaches the pool `'error'` listener). With `options.preparedStatements`, each statement
 * gets a prepared-statement name (see {@link preparedName}); otherwise every statement is unnamed.
 */
export class StatementSet<K extends string> {
  /** The runner the statements go through (for deadlines and DDL). */
  readonly runner: PgRunner;
  /** The statements by key. */
  readonly statements: Readonly<Record<K, Statement>>;

  constructor(
    pool: Pool,
    backend: string,
    options: Pick<ResolvedStatementOptions, 'statementTimeoutMs' | 'preparedStatements' | 'logger'>,
    texts: Record<K, string>,
  ) {
    this.runner = new PgRunner(pool, backend, options.statementTimeoutMs, options.logger);
    const prepared = options.preparedStatements;
    this.statements = Object.fromEntries(
      Object.entries<string>(texts).map(([key, text]) => [
        key,
        { text, name: prepared ? preparedName(key, text) : undefined },
      ]),
    ) as Record<K, Statement>;
  }

  /** Runs statement `key` for `operation` (see {@link PgRunner.query}). */
  run<R extends QueryResultRow>(
    operation: string,
    key: K,
    values: unknown[],
    options: RunOptions = {},
  ): Promise<R[]> {
    const { text, name } = this.statements[key];
    return this.runner.query<R>(operation, text, values, { ...options, name });
  }

  /** The default deadline of an operation starting now (see {@link PgRunner.deadline}). */
  deadline(): number {
    return this.runner.deadline();
  }

  /** Runs idempotent DDL through the runner (see {@link runMigration}). */
  migrate(ddl: string): Promise<void> {
    return runMigration(this.runner, ddl);
  }
}
