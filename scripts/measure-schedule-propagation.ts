/**
 * By-hand measurement (not a test): how long a stored-schedule change takes to reach every
 * `ScheduleServer` serving its handler, on PostgreSQL (LISTEN/NOTIFY push) started from local
 * binaries by the testkit.
 *
 *   NODE_OPTIONS=--conditions=source node_modules/.bin/tsx scripts/measure-schedule-propagation.ts \
 *     [changes] [servers]
 *
 * Each server is a Scheduler (MemoryLock, not started: only its job list matters) with a
 * ScheduleServer on its own `pg.Pool`. An admin client on another pool updates one schedule
 * `changes` times, one at a time; the time from the update's answer until every server serves
 * the new version (polled every millisecond) is one sample. Prints p50, p99 and max.
 */
import { createRequire } from 'node:module';
import { MemoryLock, Scheduler, ScheduleServer } from '../packages/core/src/index.js';
import { PostgresStore } from '../packages/store-postgres/src/index.js';
import { startPostgres } from '../packages/testkit/src/index.js';

const pg = createRequire(new URL('../packages/store-postgres/package.json', import.meta.url))(
  'pg',
) as typeof import('pg');

const CHANGES = Number(process.argv[2] ?? 200);
const SERVERS = Number(process.argv[3] ?? 4);

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

const server = await startPostgres({ strategy: 'local' });
const pools: import('pg').Pool[] = [];
const open = async () => {
  const pool = new pg.Pool({ connectionString: server.url, max: 4 });
  pool.on('error', () => {});
  pools.push(pool);
  const store = new PostgresStore(pool, { schema: 'measure_sched' });
  await store.migrate();
  return store;
};
try {
  const admin = await open();
  await admin.createSchedule(
    'measured',
    {
      handler: 'h',
      trigger: { kind: 'every', ms: 3_600_000, anchor: 0 },
      data: 0,
      enabled: true,
      options: {},
    },
    { by: 'measure' },
  );
  const servers = await Promise.all(
    Array.from({ length: SERVERS }, async () => {
      const store = await open();
      const scheduler = new Scheduler({ lock: new MemoryLock() });
      const s = new ScheduleServer({ scheduler, store, handlers: { h: () => {} } });
      await s.start();
      return { s, store };
    }),
  );
  const servesAll = (version: number) =>
    servers.every(({ s }) => s.served().some((x) => x.version === version));
  while (!servesAll(1)) await tick(); // LISTEN up everywhere (its resync read version 1)
  const samples: number[] = [];
  let version = 1;
  for (let i = 1; i <= CHANGES; i++) {
    const changed = await admin.replaceSchedule(
      'measured',
      {
        handler: 'h',
        trigger: { kind: 'every', ms: 3_600_000, anchor: 0 },
        data: i,
        enabled: true,
        options: {},
      },
      { by: 'measure', expectedVersion: version },
    );
    version = changed.version;
    const from = performance.now();
    while (!servesAll(version)) await tick();
    samples.push(performance.now() - from);
  }
  samples.sort((a, b) => a - b);
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  console.log(
    `postgres, ${SERVERS} servers, ${CHANGES} changes: propagation p50 ${ms(quantile(samples, 0.5))}, p99 ${ms(quantile(samples, 0.99))}, max ${ms(samples.at(-1) ?? Number.NaN)}`,
  );
  for (const { s, store } of servers) {
    await s.stop();
    await store.close();
  }
} finally {
  await Promise.all(pools.map((p) => p.end()));
  await server.close();
}
