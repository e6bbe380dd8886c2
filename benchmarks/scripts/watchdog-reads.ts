/**
 * What one `fleetWatchdog()` run costs on PostgreSQL (issue #30): store reads and wall time of a
 * run over `--jobs` jobs (default 1,000) that each have `--rows` rows of history (default 200,
 * one a simulated minute, the newest 10 s before the run), `--failed` % of them `failed` and
 * `--skipped` % `skipped`/`missed` (default 1 % each), the rest `succeeded`; on a throwaway
 * PostgreSQL from the testkit, one pg pool of 4.
 *
 * Three ways to read a job's rows for `run_failed` and `fires_missed`, measured side by side in
 * interleaved rounds (medians), each over every job, each checked to read the same rows:
 * - `per kind`: one `history()` page (100 rows) of `failed`/`timed_out` and one of `skipped`
 *   (the watchdog before this script);
 * - `paged on`: `history()` with the three statuses, split locally, paged on until each kind has
 *   100 rows or the history ends (so a kind is never crowded out by another);
 * - `one page + cut short`: core's `failedAndSkipped` (what the watchdog does now): one page of
 *   the three statuses, and a kind the full page may have cut short read again on its own page.
 * Then a whole watchdog run (`fleetWatchdog(...).run(ctx)`, as core has it, with a store that
 * counts its calls), with and without `lateAfterMs` (a third page per job).
 *
 *   pnpm exec tsx --conditions=source benchmarks/scripts/watchdog-reads.ts --jobs 1000 --rows 200
 *
 * A figure, not a test: nothing here asserts but that both ways read the same rows.
 */
import { parseArgs } from 'node:util';
import {
  callbackNotifier,
  type Execution,
  FakeClock,
  fleetWatchdog,
  type JobContext,
  type RunStatus,
  type Store,
  silentLogger,
} from '@fleetcron/core';
import { PostgresStore } from '@fleetcron/store-postgres';
import { startPostgres } from '@fleetcron/testkit';
import pg from 'pg';
// internal to the watchdog (not exported): the read measured here is the one the watchdog runs
import { failedAndSkipped } from '../../packages/core/src/watchdog/watchdog-reads.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000' },
    rows: { type: 'string', default: '200' },
    failed: { type: 'string', default: '1' },
    skipped: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '5' },
  },
});
const jobs = Number(values.jobs);
const rowsPerJob = Number(values.rows);
const rounds = Number(values.rounds);
const failedPct = Number(values.failed);
const skippedPct = Number(values.skipped);
for (const [name, n] of [
  ['jobs', jobs],
  ['rows', rowsPerJob],
  ['rounds', rounds],
] as const) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
}

const PAGE = 100;
const MINUTE = 60_000;
const now = Date.UTC(2026, 11, 7, 12);
const server = await startPostgres();
const pool = new pg.Pool({ connectionString: server.url, max: 4 });
pool.on('error', () => {});
const store = new PostgresStore(pool, { schema: 'watchdog_reads' });
await store.migrate();

/** The status of row `i` of job `j`: a spread of failures and missed fires among successes. */
function statusOf(j: number, i: number): { status: RunStatus; reason: string | null } {
  const x = ((j * 7919 + i * 104729) % 10_000) / 100; // 0..100, spread over jobs and rows
  if (x < failedPct) return { status: 'failed', reason: null };
  if (x < failedPct + skippedPct) return { status: 'skipped', reason: 'missed' };
  return { status: 'succeeded', reason: null };
}

const seedStarted = performance.now();
for (let i = 0; i < rowsPerJob; i++) {
  const batch: Execution[] = Array.from({ length: jobs }, (_, j) => {
    const fireAt = now - 10_000 - (rowsPerJob - 1 - i) * MINUTE;
    const { status, reason } = statusOf(j, i);
    const skipped = status === 'skipped';
    return {
      ...{ id: `j${j}-r${i}`, job: `job-${j}`, fireAt, status, attempt: skipped ? 0 : 1 },
      ...{ instanceId: 'bench', token: skipped ? null : i + 1, startedAt: fireAt + 5 },
      ...{ finishedAt: fireAt + (skipped ? 5 : 200), error: skipped ? null : null, reason },
    };
  });
  for (let k = 0; k < batch.length; k += 500) await store.recordMany(batch.slice(k, k + 500));
}
await pool.query('VACUUM ANALYZE watchdog_reads.fleetcron_executions');
const seedMs = performance.now() - seedStarted;

/** A store that counts the calls of each method. */
function counting(inner: Store): { store: Store; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(key), (calls.get(String(key)) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  });
  return { store, calls };
}

/** The span a watchdog run at `now` judges (every 30 s, settle 0). */
const span = { from: now - 30_000, to: now };
const jobNames = Array.from({ length: jobs }, (_, j) => `job-${j}`);

/** Today's way: one filtered page per kind. Rows read and calls made. */
async function perKind(s: Store): Promise<{ rows: Execution[]; calls: number }> {
  const rows: Execution[] = [];
  let calls = 0;
  for (const job of jobNames) {
    for (const status of [['failed', 'timed_out'], ['skipped']] as RunStatus[][]) {
      const page = await s.history(job, { status, limit: PAGE });
      calls++;
      rows.push(...page.executions);
    }
  }
  return { rows, calls };
}

/** The candidate: one call with the statuses, split locally, paged on until each kind is full. */
async function pagedOn(s: Store): Promise<{ rows: Execution[]; calls: number }> {
  const rows: Execution[] = [];
  let calls = 0;
  for (const job of jobNames) {
    const failed: Execution[] = [];
    const skipped: Execution[] = [];
    let cursor: string | null = null;
    do {
      const page = await s.history(job, {
        status: ['failed', 'timed_out', 'skipped'],
        limit: PAGE,
        cursor,
      });
      calls++;
      for (const r of page.executions) (r.status === 'skipped' ? skipped : failed).push(r);
      cursor = page.nextCursor;
    } while (cursor !== null && (failed.length < PAGE || skipped.length < PAGE));
    rows.push(...failed.slice(0, PAGE), ...skipped.slice(0, PAGE));
  }
  return { rows, calls };
}

/** Core's way: one page of the three statuses, a kind cut short read again on its own page. */
async function cutShort(s: Store): Promise<{ rows: Execution[]; calls: number }> {
  const { store: counted, calls } = counting(s);
  const rows: Execution[] = [];
  for (const job of jobNames) {
    const read = await failedAndSkipped(counted, job, span, { failed: true, missed: true });
    rows.push(...read.failed, ...read.skipped);
  }
  return { rows, calls: calls.get('history') ?? 0 };
}

/** One whole watchdog run as core has it: its store calls and wall time. */
async function watchdogRun(lateAfterMs: number | null): Promise<{ ms: number; calls: string }> {
  const { store: counted, calls } = counting(store);
  let alerts = 0;
  const watchdog = fleetWatchdog({
    store: counted,
    notifiers: [callbackNotifier(() => void alerts++)],
    settleMs: 0,
    lateAfterMs,
  });
  const clock = new FakeClock(now);
  const ctx = {
    ...{ job: watchdog.name, fireAt: new Date(now), startedAt: new Date(now), attempt: 1 },
    ...{ instanceId: 'bench', token: 1, signal: new AbortController().signal, clock },
    ...{ log: silentLogger, requestedBy: null, recovery: false, shard: null },
    lease: { token: 1, remainingMs: () => 60_000, assertValid: () => {} },
  } as unknown as JobContext;
  const began = performance.now();
  await watchdog.run(ctx);
  const ms = performance.now() - began;
  const list = [...calls].map(([k, n]) => `${k} ${n}`).join(', ');
  return { ms, calls: `${list}; ${alerts} alerts` };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const WAYS = { perKind, pagedOn, cutShort } as const;
type Way = keyof typeof WAYS;
const names = Object.keys(WAYS) as Way[];
const times = Object.fromEntries(names.map((w) => [w, [] as number[]])) as Record<Way, number[]>;
const callsOf = Object.fromEntries(names.map((w) => [w, 0])) as Record<Way, number>;
/** The rows that can matter to the span: a skipped row finishes when it starts (see core). */
const judged = (rows: Execution[]) =>
  rows
    .filter((r) => r.status !== 'skipped' || (r.finishedAt ?? 0) > span.from)
    .map((r) => r.id)
    .sort();
for (let round = 0; round < rounds; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length] as Way);
  const got: Partial<Record<Way, string[]>> = {};
  for (const way of order) {
    const began = performance.now();
    const result = await WAYS[way](store);
    times[way].push(performance.now() - began);
    callsOf[way] = result.calls;
    got[way] = judged(result.rows);
  }
  for (const way of names) {
    if (JSON.stringify(got[way]) !== JSON.stringify(got.perKind)) {
      throw new Error(`${way} read other rows than perKind`);
    }
  }
}
const runs = { off: [] as number[], on: [] as number[] };
let callsOff = '';
let callsOn = '';
for (let round = 0; round < rounds; round++) {
  const off = await watchdogRun(null);
  runs.off.push(off.ms);
  callsOff = off.calls;
  const on = await watchdogRun(60_000);
  runs.on.push(on.ms);
  callsOn = on.calls;
}

const total = jobs * rowsPerJob;
console.log(
  `# ${jobs} jobs × ${rowsPerJob} rows (${total.toLocaleString('en')} rows; ${failedPct} % failed, ${skippedPct} % missed), seeded in ${(seedMs / 1000).toFixed(1)} s; medians of ${rounds} rounds`,
);
console.log(
  '| reads for run_failed + fires_missed | history() calls | ms per pass over every job |',
);
console.log('| --- | ---: | ---: |');
console.log(
  `| one page per kind (before) | ${callsOf.perKind} | ${median(times.perKind).toFixed(0)} |`,
);
console.log(
  `| one call, split locally, paged on | ${callsOf.pagedOn} | ${median(times.pagedOn).toFixed(0)} |`,
);
console.log(
  `| one page, a kind cut short read again (now) | ${callsOf.cutShort} | ${median(times.cutShort).toFixed(0)} |`,
);
console.log('');
console.log('| whole watchdog run (core as it is) | store calls | ms |');
console.log('| --- | --- | ---: |');
console.log(`| lateAfterMs off | ${callsOff} | ${median(runs.off).toFixed(0)} |`);
console.log(`| lateAfterMs on | ${callsOn} | ${median(runs.on).toFixed(0)} |`);
await pool.end();
await server.close();
