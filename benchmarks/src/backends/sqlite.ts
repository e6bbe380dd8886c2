import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLock } from '@fleetcron/lock-sqlite';
import { SqliteStore } from '@fleetcron/store-sqlite';
import Database from 'libsql';
import type { BackendModule, Claimer, Connection, OwnedLock } from './types.js';
import { BENCH_LEASE_MS, fleetcronClaimer } from './types.js';

const fileOf = (connection: Connection): string => {
  if (!connection.url) throw new Error('sqlite connection without a file path (url)');
  return connection.url;
};

/**
 * A raw libsql connection (the lock's driver): WAL, 5 s busy_timeout, and `synchronous = FULL`
 * like the lock's default, set explicitly so the floor never compares an fsync'd claim with one
 * that is not (better-sqlite3's WAL default is NORMAL; libsql's is FULL).
 */
function rawConnection(file: string): Database.Database {
  const db = new Database(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

/**
 * SQLite (no server: one file in a temporary directory, shared by the worker processes):
 * `SqliteLock` (one `BEGIN IMMEDIATE` transaction per claim, in the lock's worker thread) against
 * the floor, a bare `INSERT OR IGNORE` in autocommit (+ owner-checked `DELETE`), and the peer, a
 * ShedLock-style lock row (`UPDATE … SET lock_until WHERE lock_until <= now`, else
 * `INSERT OR IGNORE`; release sets `lock_until = now`). Floor and peer run synchronously on the
 * instance's own connection, as the raw driver does.
 */
export const sqliteBackend: BackendModule = {
  name: 'sqlite',
  floorName: 'INSERT OR IGNORE (autocommit, synchronous FULL) (+ owner-checked DELETE)',
  peerName:
    'ShedLock-style lock row: UPDATE … WHERE lock_until <= now, else INSERT OR IGNORE (synchronous FULL)',
  async start() {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcron-bench-sqlite-'));
    const file = join(dir, 'bench.db');
    try {
      const lock = new SqliteLock(file);
      await lock.open();
      await lock.close();
      const db = rawConnection(file);
      db.exec(`CREATE TABLE IF NOT EXISTS floor_claims (
                 key TEXT NOT NULL, fire_at INTEGER NOT NULL, owner TEXT NOT NULL,
                 PRIMARY KEY (key, fire_at)) WITHOUT ROWID;
               CREATE TABLE IF NOT EXISTS peer_locks (
                 name TEXT PRIMARY KEY, lock_until INTEGER NOT NULL, locked_by TEXT NOT NULL
               ) WITHOUT ROWID;`);
      db.close();
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return {
      name: 'sqlite',
      connection: { url: file, namespace: 'bench' },
      version: `SQLite ${(new Database(':memory:').prepare('SELECT sqlite_version() AS v').all() as { v: string }[])[0]?.v} (libsql)`,
      strategy: 'in-process',
      async close() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  async lock(connection): Promise<OwnedLock> {
    const lock = new SqliteLock(fileOf(connection), { collectIntervalMs: 1000 });
    await lock.open();
    return { lock, close: () => lock.close() };
  },
  store: {
    // the history in the lock's file, as an application with one SQLite file has it
    async prepare(connection) {
      const store = new SqliteStore(fileOf(connection));
      await store.open();
      await store.close();
    },
    async open(connection) {
      const store = new SqliteStore(fileOf(connection));
      await store.open();
      return { store, close: () => store.close() };
    },
  },
  async claimer(connection, variant, owner): Promise<Claimer> {
    if (variant === 'fleetcron') return fleetcronClaimer(await this.lock(connection), owner);
    const db = rawConnection(fileOf(connection));
    const close = async () => {
      db.close();
    };
    if (variant === 'floor') {
      const insert = db.prepare(
        'INSERT OR IGNORE INTO floor_claims (key, fire_at, owner) VALUES (?, ?, ?)',
      );
      const remove = db.prepare(
        'DELETE FROM floor_claims WHERE key = ? AND fire_at = ? AND owner = ?',
      );
      return {
        async claim(key, fireAt) {
          if (insert.run(key, fireAt, owner).changes === 0) return { status: 'lost' };
          return { status: 'won', release: async () => remove.run(key, fireAt, owner) };
        },
        close,
      };
    }
    const take = db.prepare(
      'UPDATE peer_locks SET lock_until = ?, locked_by = ? WHERE name = ? AND lock_until <= ?',
    );
    const create = db.prepare(
      'INSERT OR IGNORE INTO peer_locks (name, lock_until, locked_by) VALUES (?, ?, ?)',
    );
    const unlock = db.prepare(
      'UPDATE peer_locks SET lock_until = ? WHERE name = ? AND locked_by = ?',
    );
    return {
      async claim(key, fireAt) {
        const name = `${key}:${fireAt}`;
        const now = Date.now();
        const until = now + BENCH_LEASE_MS;
        const won =
          take.run(until, owner, name, now).changes > 0 ||
          create.run(name, until, owner).changes > 0;
        if (!won) return { status: 'lost' };
        return { status: 'won', release: async () => unlock.run(Date.now(), name, owner) };
      },
      close,
    };
  },
};
