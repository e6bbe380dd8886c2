/**
 * What the audit log costs a pause on Redis and etcd (throwaway testkit servers): the latency of
 * `setPaused` (the pause and its audit entry in one Lua script / one txn, then the bounded prune:
 * in the script on Redis, one read txn and at most one delete txn after it on etcd) with the log
 * empty and full at its bound (`--entries`, default 100,000 recent entries, written straight into
 * the store's keys), where every append also drops the oldest entry. Prints p50 / p99 of
 * `--calls` sequential calls (default 1,000), the log's size after (it must equal the bound) and
 * the time of one `listAudit` page of 50.
 * A figure, not a test: nothing here asserts.
 *
 *   pnpm exec tsx --conditions=source benchmarks/scripts/audit-append-kv.ts --entries 100000
 */
import { parseArgs } from 'node:util';
import type { Store } from '@fleetcron/core';
import { EtcdStore } from '@fleetcron/store-etcd';
import { auditKeys, RedisStore } from '@fleetcron/store-redis';
import { startEtcd, startRedis } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    calls: { type: 'string', default: '1000' },
  },
});
const entries = Number(values.entries);
const calls = Number(values.calls);
if (!Number.isInteger(entries) || entries < 1) throw new Error('--entries: a positive integer');
if (!Number.isInteger(calls) || calls < 1) throw new Error('--calls: a positive integer');

/** A filler entry's record, as core builds a pause's. */
const record = JSON.stringify({
  ...{ action: 'pause', job: 'filler', by: 'bench', note: null, requestId: null },
  ...{ schedule: null, version: null, details: null },
});

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

const redisServer = await startRedis();
const redis = new Redis(redisServer.url);
redis.on('error', () => {});
for (const log of ['empty', 'full, recent'] as const) {
  const prefix = `bench-${log === 'empty' ? 0 : 1}`;
  const keys = auditKeys(prefix);
  if (log !== 'empty') {
    const jobSet = keys.job('filler');
    const now = Date.now();
    for (let from = 1; from <= entries; from += 5_000) {
      const batch = redis.pipeline();
      for (let seq = from; seq < Math.min(from + 5_000, entries + 1); seq++) {
        batch.hset(keys.entries, seq, `${now}||${jobSet.length}|${jobSet}${record}`);
        batch.zadd(keys.log, seq, seq);
        batch.zadd(jobSet, seq, seq);
      }
      await batch.exec();
    }
    await redis.set(keys.sequence, entries);
  }
  const store = new RedisStore(redis, { prefix, audit: { maxEntries: entries } });
  const m = await measure(store);
  rows.push(`redis | ${log} | ${fmt(m)} | ${await redis.zcard(keys.log)}`);
  const started = performance.now();
  const page = await store.listAudit({ limit: 50 });
  rows.push(
    `redis | listAudit page of ${page.entries.length} | ${(performance.now() - started).toFixed(2)} ms |`,
  );
}
redis.disconnect();
await redisServer.stop();

const etcdServer = await startEtcd();
const etcd = new Etcd3({ hosts: etcdServer.endpoints });
for (const log of ['empty', 'full, recent'] as const) {
  const prefix = `bench-${log === 'empty' ? 0 : 1}/`;
  if (log !== 'empty') {
    const now = Date.now();
    const job = Buffer.from('filler').toString('base64url');
    for (let from = 0; from < entries; from += 42) {
      const success = []; // 42 entries, 126 puts: within etcd's default --max-txn-ops
      for (let i = from; i < Math.min(from + 42, entries); i++) {
        // the store's layout (etcd-audit.ts): a/<id> → [job, at]; n/ and j/<job>/ at the
        // inverted id (each digit d as 9 - d) → the entry
        const time = String(now - 1).padStart(16, '0');
        const seq = String(i).padStart(6, '0');
        const id = `${time}-${seq}-00000000`;
        const flip = (t: string) => [...t].map((d) => String(9 - Number(d))).join('');
        const inverted = `${flip(time)}-${flip(seq)}-ffffffff`;
        const value = Buffer.from(JSON.stringify({ id, at: now, ...JSON.parse(record) }));
        success.push(
          {
            request_put: {
              key: Buffer.from(`${prefix}a/${id}`),
              value: Buffer.from(`["filler",${now}]`),
            },
          },
          { request_put: { key: Buffer.from(`${prefix}n/${inverted}`), value } },
          { request_put: { key: Buffer.from(`${prefix}j/${job}/${inverted}`), value } },
        );
      }
      await etcd.kv.txn({ compare: [], success, failure: [] });
    }
  }
  const store = new EtcdStore(etcd, { prefix, audit: { maxEntries: entries } });
  const m = await measure(store);
  const count = await etcd.getAll().prefix(`${prefix}n/`).count();
  const started = performance.now();
  const page = await store.listAudit({ limit: 50 });
  const pageMs = performance.now() - started;
  rows.push(`etcd | listAudit page of ${page.entries.length} | ${pageMs.toFixed(2)} ms | ${count}`);
  rows.push(`etcd | ${log} | ${fmt(m)} | ${count}`);
  await store.close();
}
etcd.close();
await etcdServer.stop();

console.log(`setPaused with its audit entry, ${calls} sequential calls, bound ${entries}\n`);
console.log('store | log | p50 / p99 | entries after');
for (const row of rows) console.log(row);
