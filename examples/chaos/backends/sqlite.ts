import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLock } from '@fleetcron/lock-sqlite';
import { SqliteStore } from '@fleetcron/store-sqlite';
import type { ChaosBackend } from '../backends.js';

/**
 * SQLite: one database file in a temp dir that every instance opens (`SqliteLock` +
 * `SqliteStore`, each on its own worker thread). No server, so only the process faults (SIGKILL,
 * SIGSTOP), and all instances on the host's clock: SQLite reads time in the process that runs
 * the statement, and a fleet sharing a file is one host.
 */
export const backend: ChaosBackend = {
  faults: ['kill', 'freeze'],
  hostClock: true,
  async startServer() {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcron-chaos-sqlite-'));
    const file = join(dir, 'fleet.db');
    const lock = new SqliteLock(file);
    const store = new SqliteStore(file);
    try {
      await Promise.all([lock.open(), store.open()]); // creates the schema once
    } finally {
      await Promise.all([lock.close(), store.close()]);
    }
    const none = async () => {
      throw new Error('SQLite has no server: this fault is not in its plan');
    };
    return {
      address: file,
      restart: none,
      dropConnections: none,
      async openStore() {
        const reader = new SqliteStore(file);
        return { store: reader, close: () => reader.close() };
      },
      close: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  async connect(address) {
    const lock = new SqliteLock(address);
    const store = new SqliteStore(address);
    return {
      lock,
      store,
      close: async () => {
        await Promise.all([lock.close(), store.close()]);
      },
    };
  },
};
