import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LockFixture, LockProbe, NewLockOptions, ServerFaults } from '@fleetcron/conformance';
import Database from 'libsql';
import { SqliteLock, type SqliteLockOptions } from '../src/index.js';
import { holdWriteLock, type WriteLockHolder } from './holder.js';
import type { SqliteProcessConfig } from './process-client.js';

/** A fresh directory for one fixture's SQLite file. */
export function tempFile(prefix = 'fleetcron-sqlite-'): { file: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    file: join(dir, 'fleetcron.db'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Makes conformance fixtures: each fixture is a new file in a temp directory, each `newLock()` a
 * `SqliteLock` on that path (its own worker thread and connection, as a separate process would
 * have). The probe counts records through a connection of its own, below the API.
 */
export function lockFixtures(
  extra: Omit<SqliteLockOptions, 'windowMs'> = {},
): () => Promise<LockFixture & { file: string; probe: LockProbe }> {
  return async () => {
    const { file, remove } = tempFile();
    const locks: SqliteLock[] = [];
    let closed: Promise<void> | undefined;
    const probeDb = () => new Database(file, { timeout: 10_000, readonly: true });
    return {
      file,
      processLock: {
        module: new URL('./process-client.ts', import.meta.url).href,
        exportName: 'openLock',
        config: { file, lock: extra } satisfies SqliteProcessConfig,
      },
      async newLock(options: NewLockOptions = {}) {
        // options.clock is ignored on purpose: the host's clock judges time (capabilities.clock 'backend').
        const lock = new SqliteLock(file, { ...extra, windowMs: options.windowMs });
        locks.push(lock);
        await lock.open(); // the worker thread starts (and compiles the sources) before the clock runs
        return lock;
      },
      probe: {
        async claimRecordCount() {
          const db = probeDb();
          try {
            const row = db.prepare('SELECT count(*) AS n FROM fleetcron_claims').get() as {
              n: number;
            };
            return row.n;
          } finally {
            db.close();
          }
        },
      },
      close() {
        closed ??= (async () => {
          await Promise.all(locks.map((l) => l.close()));
          remove();
        })();
        return closed;
      },
    };
  };
}

/**
 * The "server" faults of the conformance suite, mapped to what can break a SQLite file (there is
 * no server): `restart` = a process killed mid-transaction with an uncommitted write;
 * `dropConnections` = the write lock held by another process past `busy_timeout`, then that
 * process SIGKILLed; `pause`/`resume` = the write lock held until resumed (a stalled disk).
 * Faults apply to every file made by the fixtures this returns.
 */
export function fileFaults(extra: Omit<SqliteLockOptions, 'windowMs'>, holdMs: number) {
  const files: string[] = [];
  const create = lockFixtures(extra);
  const paused: WriteLockHolder[] = [];
  const each = async (fn: (file: string) => Promise<void>) => {
    await Promise.all(files.map(fn));
  };
  const server: ServerFaults = {
    restart: () =>
      each(async (file) => {
        const holder = await holdWriteLock(file, true);
        await holder.kill();
      }),
    dropConnections: () =>
      each(async (file) => {
        const holder = await holdWriteLock(file);
        await new Promise((resolve) => setTimeout(resolve, holdMs));
        await holder.kill();
      }),
    pause: () =>
      each(async (file) => {
        paused.push(await holdWriteLock(file));
      }),
    resume: async () => {
      await Promise.all(paused.splice(0).map((h) => h.kill()));
    },
  };
  return {
    create: async () => {
      const fixture = await create();
      files.push(fixture.file);
      const close = fixture.close;
      fixture.close = () => {
        files.splice(files.indexOf(fixture.file), 1);
        return close();
      };
      return fixture;
    },
    server,
    close: () => server.resume(),
  };
}
