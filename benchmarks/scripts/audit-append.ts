/**
 * What the audit log costs a pause, on a throwaway PostgreSQL (testkit) and a SQLite file: the
 * latency of `setPaused` (flag + audit entry + bounded prune, one statement / transaction) with
 * the log empty and with it full at its bound (`--entries`, default 100,000, filled with one
 * INSERT ... SELECT), where every append also deletes the oldest entry. Prints p50 / p99 of
 * `--calls` sequential calls (default 2,000) and the log's row count after (it must equal the
 * bound). A figure, not a test: nothing here asserts.
 *
 *   pnpm exec tsx --conditions=source benchmarks/scripts/audit-append.ts --entries 100000
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Store } from '@fleetcron/core';
import { PostgresStore } from '@fleetcron/store-postgres';
import { SqliteStore } from '@fleetcron/store-sqlite';
import { startPostgres } from '@fleetcron/testkit';
import Database from 'libsql';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    calls: { type: 'string', default: '2000' },
  },
});
const entries = Number(values.entries);
const calls = Number(values.calls);
if (!Number.isInteger(entries) || entries < 1) throw new Error('--entries: a positive integer');
if (!Number.isInteger(calls) || calls < 1) throw new Error('--calls: a positive integer');

/** Filler rows stamped `at` (SQL): 0 = expired by the 90-day bound, or now. */
const fill = (at: string) =>
  `SELECT ${at}, 'pause', 'filler', 'bench', NULL, NULL, NULL, NULL, NULL`;
/** The log before the calls: empty; full of entries past the age bound; full of recent ones. */
const LOGS = ['empty', 'full, expired', 'full, recent'] as const;

/** p50 and p99 of `calls` pauses, ms. */
async function measure(store: Store): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await store.setPaused('bench', i % 2 === 0, { by: 'bench', note: `call ${i}` });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

const rows: string[] = [];
const fmt = (m: { p50: number; p99: number }) => `${m.p50.toFixed(2)} / ${m.p99.toFixed(2)} ms`;

const server = await startPostgres();
const pool = new pg.Pool({ connectionString: server.url, max: 2 });
pool.on('error', () => {});
for (const [i, log] of LOGS.entries()) {
  const schema = `audit_${i}`;
  const store = new PostgresStore(pool, { schema, audit: { maxEntries: entries } });
  await store.migrate();
  if (log !== 'empty') {
    const at = log === 'full, expired' ? '0' : 'floor(extract(epoch FROM now()) * 1000)::bigint';
    await pool.query(
      `INSERT INTO "${schema}".fleetcron_audit (at, action, job, actor, note, request_id, schedule, version, details)
       ${fill(at)} FROM generate_series(1, ${entries})`,
    );
  }
  const m = await measure(store);
  const { rows: count } = await pool.query(
    `SELECT count(*)::int AS n FROM "${schema}".fleetcron_audit`,
  );
  rows.push(`postgres | ${log} | ${fmt(m)} | ${count[0].n}`);
}
await pool.end();
await server.stop();

const dir = mkdtempSync(join(tmpdir(), 'fleetcron-audit-bench-'));
try {
  for (const [i, log] of LOGS.entries()) {
    const file = join(dir, `log-${i}.db`);
    const store = new SqliteStore(file, { audit: { maxEntries: entries } });
    await store.open();
    if (log !== 'empty') {
      const at = log === 'full, expired' ? '0' : "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
      const db = new Database(file);
      db.exec(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${entries})
         INSERT INTO fleetcron_audit (at, action, job, actor, note, request_id, schedule, version, details)
         ${fill(at)} FROM n`,
      );
      db.close();
    }
    const m = await measure(store);
    const db = new Database(file);
    const n = (db.prepare('SELECT count(*) AS n FROM fleetcron_audit').get() as { n: number }).n;
    db.close();
    await store.close();
    rows.push(`sqlite | ${log} | ${fmt(m)} | ${n}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`setPaused with its audit entry, ${calls} sequential calls, bound ${entries}\n`);
console.log('store | log | p50 / p99 | entries after');
for (const row of rows) console.log(row);
