import type { SqliteDatabase } from './database.js';

/**
 * Wraps an adapter's `prepare(db)` so each connection prepares its statements once:
 * `const statements = statementCache(prepare)`, then `statements(db).claim.run(...)`. A connection
 * that is closed and collected drops its entry (a `WeakMap`). Imports nothing at run time: the
 * operation modules that use it are loaded by URL in the worker thread (import it from
 * `@fleetcron/sqlite-shared/statement-cache` there, not from the package's index).
 */
export function statementCache<S>(prepare: (db: SqliteDatabase) => S): (db: SqliteDatabase) => S {
  const cache = new WeakMap<SqliteDatabase, S>();
  return (db) => {
    let found = cache.get(db);
    if (found === undefined) {
      found = prepare(db);
      cache.set(db, found);
    }
    return found;
  };
}
