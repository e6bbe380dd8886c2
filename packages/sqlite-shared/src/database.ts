/**
 * The part of a SQLite connection the adapters use, typed once here (better-sqlite3's API, which
 * libsql implements): statements typed by their parameters and row, transactions, pragmas. Both
 * libsql's `Database` and better-sqlite3's fit it. Types only: worker threads import this file.
 */

/** What a writing statement reports. */
export interface SqliteRunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/** A prepared statement taking `Params` and answering rows of type `Row`. */
export interface SqliteStatement<Params extends unknown[] = unknown[], Row = unknown> {
  run(...params: Params): SqliteRunResult;
  /** The first row, or `undefined`. (libsql adds a `_metadata` field: never spread it.) */
  get(...params: Params): Row | undefined;
  all(...params: Params): Row[];
}

/** A function wrapped in a transaction, with its `BEGIN` variants. */
// biome-ignore lint/suspicious/noExplicitAny: any function fits, as in the drivers' own types
export interface SqliteTransaction<F extends (...args: any[]) => unknown> {
  (...args: Parameters<F>): ReturnType<F>;
  deferred(...args: Parameters<F>): ReturnType<F>;
  immediate(...args: Parameters<F>): ReturnType<F>;
  exclusive(...args: Parameters<F>): ReturnType<F>;
}

/** An open SQLite connection: a libsql (or better-sqlite3) `Database`. */
export interface SqliteDatabase {
  readonly memory: boolean;
  readonly open: boolean;
  prepare<Params extends unknown[] = unknown[], Row = unknown>(
    source: string,
  ): SqliteStatement<Params, Row>;
  // biome-ignore lint/suspicious/noExplicitAny: any function fits, as in the drivers' own types
  transaction<F extends (...args: any[]) => unknown>(fn: F): SqliteTransaction<F>;
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
}
