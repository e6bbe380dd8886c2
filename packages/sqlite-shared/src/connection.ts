import { retryBusy } from './busy-retry.js';
import type { SqliteDatabase } from './database.js';
import { loadDriver } from './driver.js';
import type { ConnectionSettings } from './protocol.js';

/**
 * Opens `file` (created if missing) for an adapter: WAL journal (readers never block the writer),
 * `synchronous` as set, and `busy_timeout` 0: waits for the write lock happen in
 * {@link retryBusy} (fair, bounded by `settings.busyTimeoutMs`). Imports nothing from
 * `@fleetcron/core`: worker threads call it.
 */
export function openConnection(file: string, settings: ConnectionSettings): SqliteDatabase {
  const Database = loadDriver();
  const db = new Database(file, { timeout: 0 }) as unknown as SqliteDatabase;
  try {
    retryBusy(() => tuneConnection(db, settings, 0, file), settings.busyTimeoutMs);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Applies WAL mode, `synchronous` and `busy_timeout` (default: `settings.busyTimeoutMs`) to an
 * open connection (the user's, too).
 */
export function tuneConnection(
  db: SqliteDatabase,
  settings: ConnectionSettings,
  busyTimeoutMs = settings.busyTimeoutMs,
  file = 'the database',
): void {
  db.pragma(`busy_timeout = ${Math.max(0, Math.round(busyTimeoutMs))}`);
  if (!db.memory) {
    const mode = pragmaValue(db, 'journal_mode = WAL');
    if (String(mode).toLowerCase() !== 'wal') {
      throw new WalModeError(file, String(mode));
    }
  }
  db.pragma(`synchronous = ${settings.synchronous}`);
}

/**
 * The value of a one-column pragma. libsql's `pragma(..., { simple: true })` answers the row
 * (`{ journal_mode: 'wal' }`) where better-sqlite3 answers the value; this reads either.
 */
function pragmaValue(db: SqliteDatabase, source: string): unknown {
  const value = db.pragma(source, { simple: true });
  return typeof value === 'object' && value !== null ? Object.values(value)[0] : value;
}

/** Name of {@link WalModeError}: failures cross the worker boundary by name, not class. */
export const WAL_MODE_ERROR = 'SqliteWalModeError';

/**
 * SQLite kept another journal mode when asked for WAL (a file system or VFS without the shared
 * memory WAL needs, such as a network share). A setup error: the adapters turn it into
 * `InvalidOptionError` (field `database`). A plain `Error` because worker threads throw it and
 * this module imports nothing from `@fleetcron/core`.
 */
export class WalModeError extends Error {
  constructor(file: string, mode: string) {
    super(
      `could not switch ${file} to WAL mode (journal_mode stays ${mode}). Put the database on a local file system (WAL needs shared memory, which network shares lack), with the file and its folder writable.`,
    );
    this.name = WAL_MODE_ERROR;
  }
}
