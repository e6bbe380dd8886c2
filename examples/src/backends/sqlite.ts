import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLock } from '@fleetcron/lock-sqlite';
import { SqliteStore } from '@fleetcron/store-sqlite';
import type { DemoBackend } from '../backends.js';

/**
 * SQLite in one process: a file in a temporary directory, `SqliteLock` + `SqliteStore` on it
 * (each with its own worker thread), removed on close. `pnpm demo` without `--backend` runs real
 * processes on such a file instead (process-fleet.ts). Time is judged by the host's clock.
 */
export async function openSqlite(): Promise<DemoBackend> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-demo-'));
  const file = join(dir, 'fleet.db');
  const lock = new SqliteLock(file);
  const store = new SqliteStore(file);
  await Promise.all([lock.open(), store.open()]);
  return {
    lock,
    store,
    close: async () => {
      await Promise.all([lock.close(), store.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
