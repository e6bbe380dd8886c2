import { BackendUnavailableError, type Logger } from '@fleetcron/core';
import type { Pool, PoolClient, QueryConfig, QueryResultRow } from 'pg';
import { isConnectionError } from './connection-error.js';
import { DeadlineError, GivenUpError } from './deadline-error.js';
import { explainServerError } from './read-only-error.js';

/** Options of one {@link PgRunner.query}. */
export interface RunOptions {
  /** Epoch ms by which the whole operation must finish. Default: now + statementTimeoutMs. */
  deadline?: number;
  /**
   * Repeat the statement once when the connection broke under it (a pooled connection the server
   * had already closed). Only for statements that are safe to repeat.
   */
  retry?: boolean;
  /**
   * Name of a prepared statement (see `preparedName`): pg prepares it once per connection
   * and reuses its plan. Omitted: an unnamed statement, planned on every execution.
   */
  name?: string;
  /**
   * Aborted when the caller gives up on the operation. From then on the statement is not sent:
   * a wait for a pooled connection ends at once (a connection that arrives later goes straight
   * back to the pool), a statement not yet written is not written, and a broken connection is
   * not retried. A statement already sent runs to its answer (see the lock's README, "A claim
   * given up on").
   */
  signal?: AbortSignal;
}

/**
 * Runs single statements on a `pg.Pool` with a deadline, and turns every failure into
 * `BackendUnavailableError`. Each statement runs in its own implicit transaction. Unless a
 * `name` is given (opt-in `preparedStatements`), statements are unnamed and hold no session
 * state, so transaction-mode poolers (PgBouncer) work.
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
    boundPoolConnects(pool, timeoutMs);
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
    const { signal } = options;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<R>(text, values, deadline, options.name, signal);
      } catch (error) {
        const again = options.retry && attempt === 1 && isConnectionError(error);
        if (again && Date.now() < deadline && !signal?.aborted) continue;
        throw new BackendUnavailableError(this.backend, operation, explainServerError(error));
      }
    }
  }

  private async once<R extends QueryResultRow>(
    text: string,
    values: unknown[] | undefined,
    deadline: number,
    name: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<R[]> {
    const client = await this.connect(deadline, signal); // carries `ignoreClientError`
    let failure: Error | undefined;
    try {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new DeadlineError('the statement', this.timeoutMs);
      if (signal?.aborted) throw new GivenUpError();
      // query_timeout makes pg reject; release(error) below then destroys the connection, so a
      // statement stuck on a frozen server cannot hold a pooled client.
      // (@types/pg omits query_timeout from QueryConfig; pg 8 reads it per query.)
      const config: QueryConfig & { query_timeout: number } = {
        text,
        values,
        query_timeout: remaining,
        ...(name ? { name } : {}),
      };
      const result = await client.query<R>(config);
      return result.rows;
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      // Synchronously followed by release(), which puts the pool's own listener back.
      client.off('error', ignoreClientError);
      client.release(failure); // an error destroys the connection instead of pooling it
    }
  }

  /**
   * Checks a client out of the pool, giving up at `deadline` (pg itself waits forever), and
   * attaches {@link ignoreClientError} to it at once. The callback form matters: pg-pool removes
   * its own listener when it hands a client out, and a new connection's startup reply and the
   * server's "terminating connection" error can arrive in one network read. A promise
   * continuation would attach our listener only after pg had emitted that 'error' with no
   * listener, which crashes the process.
   */
  private connect(deadline: number, signal: AbortSignal | undefined): Promise<PoolClient> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(new GivenUpError());
        return;
      }
      let gaveUp = false;
      const giveUp = (reason: Error) => {
        gaveUp = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(reason);
      };
      const onAbort = () => giveUp(new GivenUpError());
      const timer = setTimeout(
        () => giveUp(new DeadlineError('getting a connection', this.timeoutMs)),
        Math.max(0, deadline - Date.now()),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pool.connect((error, client, release) => {
        if (gaveUp) {
          if (client) release(); // arrived after the deadline or the abort: back to the pool
          return;
        }
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error || !client) {
          reject(error ?? new Error('the pool gave no client'));
          return;
        }
        client.on('error', ignoreClientError);
        resolve(client);
      });
    });
  }
}

/**
 * Gives a pool without `connectionTimeoutMillis` that bound (`timeoutMs`, the adapter's
 * `statementTimeoutMs`). pg's default is to wait forever for a new connection's startup, and the
 * pool counts a connection being opened as one of its `max` slots: on a network path that stalls
 * or a primary that vanished without a reset, every slot is soon held by a connection that never
 * opens (the kernel gives up a connect after about two minutes), and every call fails at its
 * deadline even once the database is reachable again. With the bound, pg-pool destroys such a
 * connection and frees its slot. A pool given its own `connectionTimeoutMillis` is left as it is.
 */
function boundPoolConnects(pool: Pool, timeoutMs: number): void {
  const options = (pool as Pool & { options?: { connectionTimeoutMillis?: number } }).options;
  if (options && !options.connectionTimeoutMillis) options.connectionTimeoutMillis = timeoutMs;
}

/**
 * Listener on checked-out clients. A connection that dies while checked out emits 'error' on its
 * client (pg-pool listens only to idle ones); the statement running on it fails as well and is
 * reported from there, so the event itself needs no handling, only a listener.
 */
function ignoreClientError(): void {}
