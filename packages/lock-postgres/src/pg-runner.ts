import { BackendUnavailableError, type Logger } from '@fleetcron/core';
import type { Pool, PoolClient, QueryConfig, QueryResultRow } from 'pg';

/** Thrown inside the runner when the operation's deadline passes; becomes the `cause`. */
class DeadlineError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms (statementTimeoutMs)`);
    this.name = 'DeadlineError';
  }
}

/** Options of one {@link PgRunner.query}. */
export interface RunOptions {
  /** Epoch ms by which the whole operation must finish. Default: now + statementTimeoutMs. */
  deadline?: number;
  /**
   * Repeat the statement once when the connection broke under it (a pooled connection the server
   * had already closed). Only for statements that are safe to repeat.
   */
  retry?: boolean;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** True for errors of the connection rather than of the statement: worth one more try. */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof DeadlineError) return false;
  if (error instanceof Error && error.message === 'Query read timeout') return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !SQLSTATE.test(code)) return true; // socket errors, terminated
  return code.startsWith('08') || code.startsWith('40') || /^57P0[123]$/.test(code);
}

/**
 * Runs single statements on a `pg.Pool` with a deadline, and turns every failure into
 * `BackendUnavailableError`. Holds no session state: each statement is an unnamed prepared
 * statement in its own implicit transaction, so transaction-mode poolers (PgBouncer) work.
 */
export class PgRunner {
  constructor(
    private readonly pool: Pool,
    private readonly backend: string,
    readonly timeoutMs: number,
    logger: Logger,
  ) {
    // pg emits 'error' on the pool when an idle pooled connection dies (server restart,
    // pg_terminate_backend, network). Unhandled, that event crashes the process. The pool
    // already drops the broken client; the listener only keeps the host alive and logs.
    if (pool.listenerCount('error') === 0) {
      pool.on('error', (error) => {
        logger.warn(`${backend}: idle pooled connection failed; the pool dropped it`, { error });
      });
    }
  }

  /** The default deadline of an operation starting now. */
  deadline(): number {
    return Date.now() + this.timeoutMs;
  }

  /** Runs `text` with `values`; resolves its rows or throws `BackendUnavailableError`. */
  async query<R extends QueryResultRow>(
    operation: string,
    text: string,
    values: unknown[] | undefined,
    options: RunOptions = {},
  ): Promise<R[]> {
    const deadline = options.deadline ?? this.deadline();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<R>(text, values, deadline);
      } catch (error) {
        const again = options.retry && attempt === 1 && isConnectionError(error);
        if (again && Date.now() < deadline) continue;
        throw new BackendUnavailableError(this.backend, operation, error);
      }
    }
  }

  private async once<R extends QueryResultRow>(
    text: string,
    values: unknown[] | undefined,
    deadline: number,
  ): Promise<R[]> {
    const client = await this.connect(deadline);
    // A connection that dies while checked out emits 'error' on the client (no pool listener is
    // attached then). The failed query rejects as well, so this listener only has to exist.
    const ignore = () => {};
    client.on('error', ignore);
    let failure: Error | undefined;
    try {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new DeadlineError('the statement', this.timeoutMs);
      // query_timeout makes pg reject and (through release(error) below) destroy the
      // connection, so a statement stuck on a frozen server cannot hold a pooled client.
      // (@types/pg omits query_timeout from QueryConfig; pg 8 reads it per query.)
      const config: QueryConfig & { query_timeout: number } = {
        text,
        values,
        query_timeout: remaining,
      };
      const result = await client.query<R>(config);
      return result.rows;
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.off('error', ignore);
      client.release(failure); // an error destroys the connection instead of pooling it
    }
  }

  /** Checks a client out of the pool, giving up at `deadline` (pg itself waits forever). */
  private async connect(deadline: number): Promise<PoolClient> {
    const pending = this.pool.connect();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DeadlineError('getting a connection', this.timeoutMs)),
        Math.max(0, deadline - Date.now()),
      );
    });
    try {
      return await Promise.race([pending, expired]);
    } catch (error) {
      // A connection that arrives after the deadline goes straight back to the pool.
      pending.then(
        (client) => client.release(),
        () => {},
      );
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}
