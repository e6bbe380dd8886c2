/**
 * Messages between an executor and its worker thread, and the shape of an operation set.
 * This file imports nothing (not even `@fleetcron/core`): the worker thread loads it by URL.
 */
import type { SqliteDatabase } from './database.js';

/** A synchronous operation run on one connection: the body of one request. */
export type SqliteOperation = (db: SqliteDatabase, args: never) => unknown;

/** A named set of operations, plus the idempotent DDL run once per connection. */
export interface SqliteOperations {
  /** Creates the tables and indexes if missing (idempotent). Run when a connection opens. */
  migrate(db: SqliteDatabase): void;
  /** The operations, by name. */
  ops: Record<string, SqliteOperation>;
}

/** How a connection is opened and tuned. */
export interface ConnectionSettings {
  /** SQLite `busy_timeout`: how long a statement waits for another connection's write lock. */
  busyTimeoutMs: number;
  /** SQLite `synchronous` pragma in WAL mode: `FULL` (default) survives power loss, `NORMAL` a crash. */
  synchronous: 'FULL' | 'NORMAL';
}

/** What the worker thread is started with. */
export interface WorkerSetup {
  file: string;
  settings: ConnectionSettings;
  /** URL of the module exporting the operation set. */
  operationsUrl: string;
  /** Name of the export holding the {@link SqliteOperations}. */
  operationsExport: string;
  /** One Int32 cell per in-flight request: 1 = the caller gave up, do not run it. */
  abortCells: SharedArrayBuffer;
}

/** A request to the worker. `cell` is the abort cell of the request, or -1. */
export interface WorkerRequest {
  id: number;
  op: string;
  args: unknown;
  cell: number;
}

/** An error as it crosses the thread boundary. */
export interface WorkerFailure {
  name: string;
  message: string;
  /** SQLite's extended code (`SQLITE_BUSY`, ...) when the driver threw a `SqliteError`. */
  code: string | null;
}

/** The worker's answer to one request. */
export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; failure: WorkerFailure; aborted?: boolean };

/** The worker's first message: the connection is open and migrated, or it could not be. */
export type WorkerReady = { ready: true } | { ready: false; failure: WorkerFailure };

/** Turns anything thrown into a {@link WorkerFailure}. */
export function toFailure(error: unknown): WorkerFailure {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      name: error.name,
      message: error.message,
      code: typeof code === 'string' ? code : null,
    };
  }
  return { name: 'Error', message: String(error), code: null };
}
