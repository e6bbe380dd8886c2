import {
  assertPositiveInteger,
  boundErrorText,
  decodeCursor,
  type Execution,
  encodeCursor,
  type HistoryPage,
  type HistoryQuery,
  InvalidOptionError,
  type JobState,
  type RunStatus,
  type Store,
} from '@fleetcron/core';
import type { Pool, QueryResultRow } from 'pg';
import {
  type PostgresStoreOptions,
  type ResolvedStoreOptions,
  resolveStoreOptions,
} from './options.js';
import { PgRunner, preparedName, type RunOptions } from './pg-runner.js';
import { postgresStoreSchema, type StoreTables, storeTables } from './schema.js';
import {
  type ExecutionRow,
  historySql,
  type JobRow,
  jobStateSql,
  pruneSql,
  recordSql,
  setPausedSql,
} from './statements.js';
import { decodeText, encodeText } from './text.js';

/** PostgreSQL error codes a concurrent `migrate()` can hit on `CREATE ... IF NOT EXISTS`. */
const CONCURRENT_DDL = new Set(['23505', '42P07', '42710', '42P06']);

/** The store's statements. */
type StatementName = 'record' | 'history' | 'prune' | 'jobState' | 'setPaused';

/** Default page size of {@link PostgresStore.history}. */
const DEFAULT_LIMIT = 50;

/**
 * A {@link Store} on PostgreSQL: execution history (newest first, keyset-paginated) and
 * fleet-wide job state. Every method is one statement in its own implicit transaction; no
 * session state, so transaction-mode poolers work.
 *
 * Takes a `pg.Pool` you own (never closes it). Run {@link PostgresStore.migrate} once (or apply
 * {@link postgresStoreSchema} with your migration tool) before use.
 */
export class PostgresStore implements Store {
  readonly backend = 'postgres';
  private readonly options: ResolvedStoreOptions;
  private readonly tables: StoreTables;
  private readonly runner: PgRunner;
  private readonly statements: Record<StatementName, { text: string; name: string | undefined }>;

  /** Validates `options` (throws `InvalidOptionError` naming the field); runs no query. */
  constructor(pool: Pool, options: PostgresStoreOptions = {}) {
    if (!pool || typeof (pool as Partial<Pool>).connect !== 'function') {
      throw new InvalidOptionError('pool', 'must be a pg.Pool.');
    }
    this.options = resolveStoreOptions(options);
    this.tables = storeTables(this.options.schema, this.options.table);
    this.runner = new PgRunner(
      pool,
      this.backend,
      this.options.statementTimeoutMs,
      this.options.logger,
    );
    const t = this.tables;
    const texts: Record<StatementName, string> = {
      record: recordSql(t),
      history: historySql(t),
      prune: pruneSql(t),
      jobState: jobStateSql(t),
      setPaused: setPausedSql(t),
    };
    this.statements = Object.fromEntries(
      Object.entries(texts).map(([key, text]) => [
        key,
        { text, name: this.options.preparedStatements ? preparedName(key, text) : undefined },
      ]),
    ) as PostgresStore['statements'];
  }

  /**
   * Creates the schema, tables and indexes when missing (idempotent; safe to run from every
   * instance at start-up). Throws `BackendUnavailableError` when the database cannot be reached.
   */
  async migrate(): Promise<void> {
    const ddl = postgresStoreSchema(this.options);
    for (let attempt = 1; ; attempt++) {
      try {
        // Without parameters pg uses the simple protocol: the statements run as one transaction.
        await this.runner.query('migrate', ddl, undefined, {
          deadline: Date.now() + Math.max(30_000, this.runner.timeoutMs),
        });
        return;
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code;
        if (attempt < 3 && code && CONCURRENT_DDL.has(code)) continue; // another instance won
        throw error;
      }
    }
  }

  async record(execution: Execution): Promise<void> {
    const error = boundErrorText(execution.error, this.options.maxErrorLength);
    const reason = execution.reason ?? null;
    // An upsert by id: safe to repeat when the connection broke under the first attempt.
    await this.run(
      'record',
      'record',
      [
        encodeText(execution.id),
        encodeText(execution.job),
        execution.fireAt,
        execution.status,
        execution.attempt,
        encodeText(execution.instanceId),
        execution.token,
        execution.startedAt,
        execution.finishedAt,
        error === null ? null : encodeText(error),
        reason === null ? null : encodeText(reason),
      ],
      { retry: true },
    );
  }

  async history(job: string, query: HistoryQuery = {}): Promise<HistoryPage> {
    const limit = query.limit ?? DEFAULT_LIMIT;
    assertPositiveInteger('limit', limit);
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    const rows = await this.run<ExecutionRow>(
      'history',
      'history',
      [encodeText(job), after?.startedAt ?? null, after ? encodeText(after.id) : null, limit + 1],
      { retry: true },
    );
    const executions = rows.slice(0, limit).map(toExecution);
    const last = executions.at(-1);
    return {
      executions,
      nextCursor: rows.length > limit && last ? encodeCursor(last.startedAt, last.id) : null,
    };
  }

  async prune(before: number): Promise<number> {
    const [row] = await this.run<{ n: string }>('prune', 'prune', [before]);
    return Number(row?.n ?? 0);
  }

  async getJobState(job: string): Promise<JobState> {
    const [row] = await this.run<JobRow>('getJobState', 'jobState', [encodeText(job)], {
      retry: true,
    });
    return {
      job,
      paused: row?.paused ?? false,
      lastStatus: (row?.last_status ?? null) as RunStatus | null,
      lastFireAt: toNumber(row?.last_fire_at),
      lastFinishedAt: toNumber(row?.last_finished_at),
    };
  }

  async setPaused(job: string, paused: boolean): Promise<void> {
    await this.run('setPaused', 'setPaused', [encodeText(job), paused], {
      retry: true,
    });
  }

  /** Runs one of the store's statements for `operation`. */
  private run<R extends QueryResultRow>(
    operation: string,
    statement: StatementName,
    values: unknown[],
    options: RunOptions = {},
  ): Promise<R[]> {
    const { text, name } = this.statements[statement];
    return this.runner.query<R>(operation, text, values, { ...options, name });
  }

  /** Nothing to free: the store holds no timers or connections of its own (the pool is yours). */
  async close(): Promise<void> {}
}

function toNumber(value: string | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function toExecution(row: ExecutionRow): Execution {
  return {
    id: decodeText(row.id),
    job: decodeText(row.job),
    fireAt: Number(row.fire_at),
    status: row.status as RunStatus,
    attempt: row.attempt,
    instanceId: decodeText(row.instance_id),
    token: toNumber(row.token),
    startedAt: Number(row.started_at),
    finishedAt: toNumber(row.finished_at),
    error: row.error === null ? null : decodeText(row.error),
    reason: row.reason === null ? null : decodeText(row.reason),
  };
}
