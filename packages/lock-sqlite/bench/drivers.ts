/**
 * Claims/s of SqliteLock on each driver, side by side in one run: the lock's own claim
 * transaction on an inline `Database` (synchronous = FULL, WAL), libsql vs better-sqlite3.
 * better-sqlite3 is not a dependency: pass its folder, e.g.
 * `BETTER_SQLITE3=/tmp/bsq/node_modules/better-sqlite3 pnpm exec tsx --conditions=source bench/drivers.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteLock } from '../src/index.js';

const require = createRequire(import.meta.url);
const drivers: [string, new (file: string) => unknown][] = [['libsql', require('libsql')]];
if (process.env.BETTER_SQLITE3)
  drivers.push(['better-sqlite3', require(process.env.BETTER_SQLITE3)]);
const N = Number(process.env.CLAIMS ?? 2000);
for (let round = 0; round < 3; round++) {
  for (const [name, Database] of drivers) {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcron-drivers-'));
    const db = new Database(join(dir, 'lock.db')) as { close(): void };
    const lock = new SqliteLock(db as never, { collectIntervalMs: 0 });
    const base = Date.now() - 60_000;
    const start = performance.now();
    for (let i = 0; i < N; i++) {
      await lock.claim({
        key: 'k',
        fireAt: base + i,
        owner: 'a',
        leaseMs: 30_000,
        exclusive: false,
      });
    }
    const ms = performance.now() - start;
    console.log(`round ${round} ${name}: ${Math.round((N / ms) * 1000)} claims/s`);
    await lock.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
