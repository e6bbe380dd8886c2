/**
 * Store size with and without the retention job, on a throwaway PostgreSQL (testkit). Two
 * schemas on one server get the same history: `--jobs` jobs (default 100) each finishing one run
 * a simulated minute, written with `recordMany` (batches of 256) for `--runs` minutes (default
 * 10,000: 1,000,000 rows at 100 jobs). In the `retention` schema, `historyRetention()` with its
 * defaults (keepLast 1,000, 30 days, 10,000 rows per run, 1,000 per call) runs every 5 simulated
 * minutes, called directly with a FakeClock at the simulated time (no scheduler, no lock: this
 * measures the store, not the claim). At each checkpoint both tables are VACUUMed (what autovacuum
 * does in time; it frees dead rows for reuse, it does not shrink the file) and the script prints
 * rows, table + index bytes (`pg_total_relation_size`), and the wall time of the retention runs.
 *
 *   pnpm exec tsx --conditions=source benchmarks/scripts/history-size.ts --runs 10000
 *
 * A figure, not a test: nothing here asserts.
 */
import { parseArgs } from 'node:util';
import { type Execution, FakeClock, historyRetention, silentLogger } from '@fleetcron/core';
import { PostgresStore } from '@fleetcron/store-postgres';
import { startPostgres } from '@fleetcron/testkit';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100' },
    runs: { type: 'string', default: '10000' },
    checkpoints: { type: 'string', default: '10' },
  },
});
const jobs = Number(values.jobs);
const runs = Number(values.runs);
const checkpoints = Number(values.checkpoints);
for (const [name, n] of [
  ['jobs', jobs],
  ['runs', runs],
  ['checkpoints', checkpoints],
] as const) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
}

const MINUTE = 60_000;
const RETENTION_EVERY = 5; // simulated minutes, the job's default interval
const start = Date.UTC(2026, 0, 1);
const server = await startPostgres();
const pool = new pg.Pool({ connectionString: server.url, max: 4 });
pool.on('error', () => {});
const stores = {
  without: new PostgresStore(pool, { schema: 'without_retention' }),
  retention: new PostgresStore(pool, { schema: 'with_retention' }),
};
for (const store of Object.values(stores)) await store.migrate();

const clock = new FakeClock(start);
const job = historyRetention({ store: stores.retention });
const context = () => ({
  ...{ job: job.name, fireAt: new Date(clock.now()), startedAt: new Date(clock.now()) },
  ...{ instanceId: 'bench', attempt: 1, token: 1, signal: new AbortController().signal },
  ...{ log: silentLogger, clock, requestedBy: null, recovery: false, shard: null },
  lease: { token: 1, remainingMs: () => 60_000, assertValid: () => {} },
});

async function size(schema: string): Promise<{ rows: number; bytes: number }> {
  const table = `"${schema}".fleetcron_executions`;
  await pool.query(`VACUUM ${table}`);
  const { rows } = await pool.query<{ n: string; bytes: string }>(
    `SELECT count(*) AS n, pg_total_relation_size('${table}') AS bytes FROM ${table}`,
  );
  return { rows: Number(rows[0]?.n), bytes: Number(rows[0]?.bytes) };
}

const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
console.log(
  `# ${jobs} jobs, ${runs} runs each (${(jobs * runs).toLocaleString('en')} rows written per schema)`,
);
console.log(
  '| runs per job | rows without | MB without | rows with retention | MB with | retention ms (sum since last) |',
);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
let retentionMs = 0;
const every = Math.max(1, Math.floor(runs / checkpoints));
for (let minute = 1; minute <= runs; minute++) {
  const batch: Execution[] = Array.from({ length: jobs }, (_, j) => {
    const startedAt = start + minute * MINUTE + j;
    return {
      ...{ id: `j${j}-m${minute}`, job: `job-${j}`, fireAt: startedAt, status: 'succeeded' },
      ...{ attempt: 1, instanceId: 'bench', token: minute, startedAt, finishedAt: startedAt + 200 },
      ...{ error: null, reason: null },
    };
  });
  for (let i = 0; i < batch.length; i += 256) {
    const part = batch.slice(i, i + 256);
    await Promise.all([stores.without.recordMany(part), stores.retention.recordMany(part)]);
  }
  await clock.advanceTo(start + minute * MINUTE + jobs + 1);
  if (minute % RETENTION_EVERY === 0) {
    const began = performance.now();
    await job.run(context());
    retentionMs += performance.now() - began;
  }
  if (minute % every === 0 || minute === runs) {
    const a = await size('without_retention');
    const b = await size('with_retention');
    console.log(
      `| ${minute.toLocaleString('en')} | ${a.rows.toLocaleString('en')} | ${mb(a.bytes)} | ${b.rows.toLocaleString('en')} | ${mb(b.bytes)} | ${Math.round(retentionMs)} |`,
    );
    retentionMs = 0;
  }
}
await pool.end();
await server.close();
