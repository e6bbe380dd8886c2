import { BackendUnavailableError } from '@fleetcron/core';
import { retryBusy } from './busy-retry.js';
import type { SqliteDatabase } from './database.js';
import { unavailable } from './errors.js';
import { type SqliteOperations, toFailure } from './protocol.js';

/** Runs named operations on one SQLite connection. */
export interface SqliteExecutor {
  /**
   * Runs operation `op` with `args`. When `signal` is already aborted nothing runs and the
   * promise rejects with `BackendUnavailableError`; when it aborts while the request waits in the
   * queue, the request is dropped before it runs. Driver failures reject with
   * `BackendUnavailableError`.
   */
  run<T>(op: string, args: unknown, signal?: AbortSignal): Promise<T>;
  /** Opens the connection and creates the tables if missing; rejects with `BackendUnavailableError`. */
  open(): Promise<void>;
  /** Closes the connection if the executor owns it. Idempotent. */
  close(): Promise<void>;
}

/**
 * Runs operations synchronously on the caller's thread, on a connection the user opened (a
 * `Database` object cannot move to another thread). A statement waiting on `busy_timeout`
 * (and the retries of {@link retryBusy}) blocks the event loop for up to that long: see the lock's
 * README.
 */
export class InlineExecutor implements SqliteExecutor {
  private migrated = false;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly operations: SqliteOperations,
    private readonly backend: string,
    private readonly owned: boolean,
    private readonly busyTimeoutMs: number,
  ) {}

  async open(): Promise<void> {
    try {
      this.migrate();
    } catch (error) {
      throw unavailable(this.backend, 'open', toFailure(error));
    }
  }

  async run<T>(op: string, args: unknown, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw BackendUnavailableError.notSent(this.backend, op);
    try {
      this.migrate();
      const operation = this.operations.ops[op];
      if (!operation) throw unknownOperation(this.backend, op);
      return retryBusy(() => operation(this.db, args as never), this.busyTimeoutMs) as T;
    } catch (error) {
      if (error instanceof BackendUnavailableError) throw error;
      throw unavailable(this.backend, op, toFailure(error));
    }
  }

  private migrate(): void {
    if (this.migrated) return;
    retryBusy(() => this.operations.migrate(this.db), this.busyTimeoutMs);
    this.migrated = true;
  }

  async close(): Promise<void> {
    if (this.owned && this.db.open) this.db.close();
  }
}

/** An operation name the adapter's operation set lacks: a bug in the adapter, failed closed. */
export function unknownOperation(backend: string, op: string): BackendUnavailableError {
  return BackendUnavailableError.because(
    backend,
    op,
    `the adapter has no operation ${JSON.stringify(op)} (a bug in the adapter: please report it)`,
  );
}
