/**
 * Memory of one instance with many jobs, measured the way a user runs it: the built `dist/`
 * of the packages under plain Node (no tsx, which adds about 40 MB). One `Scheduler` on a
 * throwaway PostgreSQL (testkit), `--jobs` jobs on `*∕10 * * * * *`, each run a 200 ms timer,
 * history in `PostgresStore` on the same pool unless `--no-store`. Every second it prints RSS and
 * the V8 heap; with `--live` it forces a full GC first (run Node with `--expose-gc`), so the heap
 * figure is the live set, not live set plus garbage not yet collected.
 *
 *   pnpm --filter './packages/*' build
 *   node benchmarks/scripts/memory.mjs --jobs 10000 --seconds 45
 *   node --expose-gc benchmarks/scripts/memory.mjs --jobs 10000 --seconds 45 --live
 *
 * This one instance wins every fire (10,000 runs at once): the worst case for one process. In a
 * fleet each instance claims every fire too, but runs only its share.
 */
import { parseArgs } from 'node:util';
import { cron, Scheduler } from '@fleetcron/core';
import { PostgresLock } from '@fleetcron/lock-postgres';
import { PostgresStore } from '@fleetcron/store-postgres';
import { startPostgres } from '@fleetcron/testkit';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '45' },
    'no-store': { type: 'boolean', default: false },
    live: { type: 'boolean', default: false },
  },
});
const jobs = Number(values.jobs);
const seconds = Number(values.seconds);
if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs must be a positive integer`);
if (!Number.isFinite(seconds) || seconds < 1) throw new Error(`--seconds must be ≥ 1`);
if (values.live && typeof globalThis.gc !== 'function') {
  throw new Error('--live forces a GC each second: run node with --expose-gc');
}
if (import.meta.url.endsWith('.ts') || process.execArgv.some((a) => a.includes('tsx'))) {
  throw new Error('run this with plain node on the built packages, not under tsx');
}

const mb = (bytes) => Math.round(bytes / 1048576);
const rss = () => mb(process.memoryUsage().rss);
const line = (text) => console.log(`${new Date().toISOString().slice(11, 23)}  ${text}`);

line(`rss ${rss()} MB with the packages loaded`);
const server = await startPostgres();
const pool = new pg.Pool({ connectionString: server.url, max: 10 });
const lock = new PostgresLock(pool);
await lock.migrate();
const store = values['no-store'] ? undefined : new PostgresStore(pool);
await store?.migrate();
const scheduler = new Scheduler({ lock, store });
const trigger = cron('*/10 * * * * *');
let runs = 0;
const run = () =>
  new Promise((resolve) =>
    setTimeout(() => {
      runs++;
      resolve();
    }, 200),
  );
for (let i = 0; i < jobs; i++) scheduler.add({ name: `job.${i}`, trigger, run });
line(`rss ${rss()} MB after adding ${jobs} jobs (store ${store ? 'on' : 'off'})`);

const startedAt = Date.now();
scheduler.start();
let peak = 0;
let lowestLive = Infinity;
let highestLive = 0;
const sampler = setInterval(() => {
  if (values.live) globalThis.gc();
  const m = process.memoryUsage();
  peak = Math.max(peak, m.rss);
  if (values.live) {
    lowestLive = Math.min(lowestLive, m.heapUsed);
    highestLive = Math.max(highestLive, m.heapUsed);
  }
  const t = ((Date.now() - startedAt) / 1000).toFixed(0).padStart(3);
  line(
    `t=${t} s  rss ${mb(m.rss)} MB  heap used ${mb(m.heapUsed)} of ${mb(m.heapTotal)} MB  runs ${runs}`,
  );
}, 1000);
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
clearInterval(sampler);
await scheduler.stop();
await pool.end();
await server.close();
const live = values.live ? `; live heap ${mb(lowestLive)}–${mb(highestLive)} MB` : '';
line(`jobs ${jobs}, runs ${runs}, peak rss ${mb(peak)} MB${live}`);
