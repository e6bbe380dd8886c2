import {
  assertPositiveInteger,
  boundErrorText,
  decodeCursor,
  type Execution,
  encodeCursor,
  type HistoryPage,
  type HistoryQuery,
  type JobState,
  type RunStatus,
  type Store,
} from '@fleetcron/core';
import { assertPool, decodeText, encodeText, StatementSet } from '@fleetcron/postgres-shared';
import type { Pool } from 'pg';
import {
  type PostgresStoreOptions,
  type ResolvedStoreOptions,
  resolveStoreOptions,
} from './options.js';
import { postgresStoreSchema, storeTables } from './schema.js';
import {
  type ExecutionRow,
  type JobRow,
  type StoreStatement,
  storeStatements,
} from './statements.js';

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
  private readonly statements: StatementSet<StoreStatement>;

  /** Validates `options` (throws `InvalidOptionError` naming the field); runs no query. */
  constructor(pool: Pool, options: PostgresStoreOptions = {}) {
    assertPool(pool);
    this.options = resolveStoreOptions(options);
    const tables = storeTables(this.options.schema, this.options.table);
    this.statements = new StatementSet(pool, this.backend, this.options, storeStatements(tables));
  }

  /**
   * Creates the schema, tables and indexes when missing (idempotent; safe to run from every
   * instance at start-up). Throws `BackendUnavailableError` when the database cannot be reached.
   */
  async migrate(): Promise<void> {
    await this.statements.migrate(postgresStoreSchema(this.options));
  }

  async record(execution: Execution): Promise<void> {
    const error = boundErrorText(execution.error, this.options.maxErrorLength);
    const reason = execution.reason ?? null;
    // An upsert by id: safe to repeat when the connection broke under the first attempt.
    await this.statements.run(
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
    const rows = await this.statements.run<ExecutionRow>(
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
    const [row] = await this.statements.run<{ n: string }>('prune', 'prune', [before]);
    return Number(row?.n ?? 0);
  }

  async getJobState(job: string): Promise<JobState> {
    const [row] = await this.statements.run<JobRow>('getJobState', 'jobState', [encodeText(job)], {
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
    await this.statements.run('setPaused', 'setPaused', [encodeText(job), paused], {
      retry: true,
    });
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
