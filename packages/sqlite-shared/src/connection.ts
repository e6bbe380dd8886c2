import Database from 'better-sqlite3';
import { retryBusy } from './busy-retry.js';
import type { ConnectionSettings } from './protocol.js';

/**
 * Opens `file` (created if missing) for an adapter: WAL journal (readers never block the writer),
 * `synchronous` as set, and `busy_timeout` 0: waits for the write lock happen in
 * {@link retryBusy} (fair, bounded by `settings.busyTimeoutMs`). Imports nothing from
 * `@fleetcron/core`: worker threads call it.
 */
export function openConnection(file: string, settings: ConnectionSettings): Database.Database {
  const db = new Database(file, { timeout: 0 });
  try {
    retryBusy(() => tuneConnection(db, settings, 0), settings.busyTimeoutMs);
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
  db: Database.Database,
  settings: ConnectionSettings,
  busyTimeoutMs = settings.busyTimeoutMs,
): void {
  db.pragma(`busy_timeout = ${Math.max(0, Math.round(busyTimeoutMs))}`);
  if (!db.memory) {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') {
      throw new Error(`could not switch ${db.name} to WAL mode (journal_mode is ${String(mode)})`);
    }
  }
  db.pragma(`synchronous = ${settings.synchronous}`);
}
