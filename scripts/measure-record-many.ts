/**
 * By-hand measurement (not a test): history writes of 10,000 executions (a start, then its
 * outcome) with `record` at concurrency 16 against `recordMany` in batches of 256 (one batch in
 * flight), on PostgreSQL, Redis, etcd and SQLite started from local binaries by the testkit.
 *
 *   NODE_OPTIONS=--conditions=source node_modules/.bin/tsx scripts/measure-record-many.ts \
 *     [executions] [backends...]
 *
 * Prints, per backend and mode, the wall time of the 10,000 starts and of the 10,000 outcomes,
 * and writes/s. Each mode writes its own jobs (1,000 jobs, so no history trim) in a fresh
 * namespace. Figures swing with CPU placement on a shared machine: compare within one run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Execution, Store } from '../packages/core/src/index.js';
import { EtcdStore } from '../packages/store-etcd/src/index.js';
import { PostgresStore } from '../packages/store-postgres/src/index.js';
import { RedisStore } from '../packages/store-redis/src/index.js';
import { SqliteStore } from '../packages/store-sqlite/src/index.js';
import { startEtcd, startPostgres, startRedis } from '../packages/testkit/src/index.js';

const requireIn = (pkg: string) =>
  createRequire(new URL(`../packages/${pkg}/package.json`, import.meta.url));
const pg = requireIn('store-postgres')('pg') as typeof import('pg');
const { Redis } = requireIn('store-redis')('ioredis') as typeof import('ioredis');
const { Etcd3 } = requireIn('store-etcd')('etcd3') as typeof import('etcd3');

const COUNT = Number(process.argv[2] ?? 10_000);
const WANTED = process.argv.slice(3);
const CONCURRENCY = 16;
const BATCH = 256;
const JOBS = 1_000;

function executions(tag: string): Execution[] {
  return Array.from({ length: COUNT }, (_, i) => {
    const fireAt = Date.UTC(2026, 0, 1) + i * 1000;
    return {
      ...{ id: `${tag}-${i}`, job: `${tag}-job-${i % JOBS}`, fireAt, status: 'running' as const },
      ...{ attempt: 1, instanceId: 'measure', token: i + 1, startedAt: fireAt + 3 },
      ...{ finishedAt: null, error: null, reason: null },
    };
  });
}

const outcomes = (starts: Execution[]): Execution[] =>
  starts.map((e) => ({ ...e, status: 'succeeded', finishedAt: e.startedAt + 20 }));

async function singles(store: Store, writes: Execution[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < writes.length) await store.record(writes[next++]!);
    }),
  );
}

async function batches(store: Store, writes: Execution[]): Promise<void> {
  for (let i = 0; i < writes.length; i += BATCH)
    await store.recordMany!(writes.slice(i, i + BATCH));
}

async function timed(body: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await body();
  return performance.now() - started;
}

interface Backend {
  name: string;
  /** A fresh store in its own namespace, and how to close it. */
  open(): Promise<{ store: Store; close(): Promise<void> }>;
  stop(): Promise<void>;
}

async function postgres(): Promise<Backend> {
  const server = await startPostgres({ strategy: 'local' });
  let n = 0;
  return {
    name: 'postgres',
    async open() {
      const pool = new pg.Pool({ connectionString: server.url, max: CONCURRENCY });
      pool.on('error', () => {});
      const store = new PostgresStore(pool, { schema: `measure_${n++}` });
      await store.migrate();
      return { store, close: () => pool.end() };
    },
    stop: () => server.close(),
  };
}

async function redis(): Promise<Backend> {
  const server = await startRedis({ strategy: 'local' });
  let n = 0;
  return {
    name: 'redis',
    async open() {
      const client = new Redis(server.url);
      client.on('error', () => {});
      const store = new RedisStore(client, { prefix: `measure-${n++}` });
      return { store, close: async () => void client.disconnect() };
    },
    stop: () => server.close(),
  };
}

async function etcd(): Promise<Backend> {
  const server = await startEtcd({ strategy: 'local' });
  let n = 0;
  return {
    name: 'etcd',
    async open() {
      const client = new Etcd3({ hosts: [...server.endpoints] });
      const store = new EtcdStore(client, { prefix: `measure-${n++}/` });
      return {
        store,
        close: async () => {
          await store.close();
          client.close();
        },
      };
    },
    stop: () => server.close(),
  };
}

async function sqlite(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-measure-'));
  let n = 0;
  return {
    name: 'sqlite',
    async open() {
      const store = new SqliteStore(join(dir, `store-${n++}.db`));
      await store.open();
      return { store, close: () => store.close() };
    },
    stop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

const BACKENDS: Record<string, () => Promise<Backend>> = { postgres, redis, etcd, sqlite };

async function main(): Promise<void> {
  const names = WANTED.length > 0 ? WANTED : Object.keys(BACKENDS);
  console.log(
    `${COUNT} executions (start, then outcome), ${JOBS} jobs; record ×${CONCURRENCY} vs recordMany ×${BATCH}`,
  );
  console.log('backend   mode                 starts ms  outcomes ms  writes/s');
  for (const name of names) {
    const backend = await BACKENDS[name]!();
    try {
      for (const mode of ['record ×16', 'recordMany ×256'] as const) {
        const { store, close } = await backend.open();
        try {
          const starts = executions(mode.startsWith('record ') ? 'single' : 'batch');
          const write = mode.startsWith('record ') ? singles : batches;
          await write(store, executions('warm').slice(0, 300)); // connections, scripts, statements
          const a = await timed(() => write(store, starts));
          const b = await timed(() => write(store, outcomes(starts)));
          const rate = Math.round((2 * COUNT) / ((a + b) / 1000));
          console.log(
            `${name.padEnd(9)} ${mode.padEnd(20)} ${a.toFixed(0).padStart(9)}  ${b.toFixed(0).padStart(11)}  ${String(rate).padStart(8)}`,
          );
        } finally {
          await close();
        }
      }
    } finally {
      await backend.stop();
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
