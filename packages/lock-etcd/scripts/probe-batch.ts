/**
 * Probe: N instance processes each claim the same `jobs` fires at one instant with claimMany
 * (batches of `batch`, all in flight), like the scale bench's batched cell, and report when each
 * batch was answered, client CPU, and etcd's server metrics over the burst.
 *
 * Run from packages/lock-etcd: `npx tsx --conditions=source scripts/probe-batch.ts [jobs] [instances] [batch]`
 * (defaults 1000 4 256). Environment: `ETCD=http://host:port` uses a running server (else the
 * testkit starts one); `ROUNDS` (3); `WARM` requests each process claims first (20; 1000 or more
 * for a warm JIT); `SPARES` / `MAXOPS` set `spareLeases` / `maxTxnOps`; `PROF=<file>` writes a
 * CPU profile of instance 0's burst. A measuring tool, not a test.
 */
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { startEtcd } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { EtcdLock } from '../src/index.js';

const args = process.env.PROBE_ARGS?.split(',') ?? process.argv.slice(2);
const [jobs, instances, batch] = [1000, 4, 256].map((d, i) => Number(args[i] ?? d));
const self = fileURLToPath(import.meta.url);

/** What each instance process reports for one burst. */
interface ChildResult {
  done: number[];
  won: number;
  cpu: number;
  start: number;
}

async function metrics(endpoint: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${endpoint}/metrics`)).text();
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const [k, v] = line.split(' ');
    if (k && v) m.set(k, Number(v));
  }
  return m;
}

async function parent() {
  const server = process.env.ETCD ? null : await startEtcd();
  const endpoint = process.env.ETCD ?? (server?.endpoints[0] as string);
  console.error('etcd at', endpoint);
  for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
    const prefix = `probe/${Date.now()}-${round}/`;
    const kids = Array.from({ length: instances }, (_, i) =>
      fork(self, ['child', endpoint, prefix, String(i)], {
        execArgv: process.execArgv,
        env: { ...process.env, PROBE_ARGS: `${jobs},${instances},${batch}` },
      }),
    );
    await Promise.all(kids.map((k) => new Promise((r) => k.once('message', r))));
    const fireAt = Date.now() + 700;
    const before = await metrics(endpoint);
    const results = await Promise.all(
      kids.map(
        (k) =>
          new Promise<ChildResult>((r) => {
            k.once('message', (m) => r(m as ChildResult));
            k.send({ fireAt });
          }),
      ),
    );
    const after = await metrics(endpoint);
    const d = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0);
    const won = results.reduce((s, r) => s + r.won, 0);
    console.log(
      `round ${round}: jobs ${jobs} x ${instances}, won ${won}; batch done ms:`,
      results.map((r) => r.done.join('/')).join(' | '),
      '; cpu ms:',
      results.map((r) => r.cpu).join(','),
      `; proposals ${d('etcd_server_proposals_committed_total')}, wal fsyncs ${d('etcd_disk_wal_fsync_duration_seconds_count')} (${(d('etcd_disk_wal_fsync_duration_seconds_sum') * 1000).toFixed(1)} ms), backend commits ${d('etcd_disk_backend_commit_duration_seconds_count')} (${(d('etcd_disk_backend_commit_duration_seconds_sum') * 1000).toFixed(1)} ms), etcd cpu ${(d('process_cpu_seconds_total') * 1000).toFixed(0)} ms, txns ${d('etcd_mvcc_txn_total')} put ${d('etcd_mvcc_put_total')} range ${d('etcd_mvcc_range_total')} apply slow ${d('etcd_server_slow_apply_total')}`,
    );
    for (const k of kids) k.kill();
  }
  await server?.stop?.();
  process.exit(0);
}

async function child() {
  const keepAlive = setInterval(() => {}, 1000);
  const [, , , endpoint, prefix, index] = process.argv as string[];
  const client = new Etcd3({ hosts: [endpoint as string] });
  const lock = new EtcdLock(client, {
    prefix,
    ...(process.env.SPARES ? { spareLeases: Number(process.env.SPARES) } : {}),
    ...(process.env.MAXOPS ? { maxTxnOps: Number(process.env.MAXOPS) } : {}),
  });
  const owner = `i${index}`;
  // warm up: a few single claims and a small batch
  const warm = Date.now();
  await lock.claim({ key: `warm-${owner}`, fireAt: warm, owner, leaseMs: 30_000, exclusive: true });
  const warmBatch = Number(process.env.WARM ?? 20);
  for (let s = 0; s < warmBatch; s += 250)
    await lock.claimMany(
      Array.from({ length: Math.min(250, warmBatch - s) }, (_, j) => ({
        key: `warm-${owner}-${s + j}`,
        fireAt: warm,
        owner,
        leaseMs: 30_000,
        exclusive: true,
      })),
    );
  process.send?.('ready');
  const { fireAt } = await new Promise<{ fireAt: number }>((r) =>
    process.once('message', (m) => r(m as { fireAt: number })),
  );
  await new Promise((r) => setTimeout(r, fireAt - Date.now()));
  const profiling = process.env.PROF && index === '0' ? new Session() : null;
  if (profiling) {
    profiling.connect();
    await profiling.post('Profiler.enable');
    await profiling.post('Profiler.setSamplingInterval', { interval: 100 });
    await profiling.post('Profiler.start');
  }
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  const requests = Array.from({ length: jobs }, (_, j) => ({
    key: `job-${j}`,
    fireAt,
    owner,
    leaseMs: 30_000,
    exclusive: true,
  }));
  const done: number[] = [];
  let won = 0;
  const batches = [];
  for (let s = 0; s < jobs; s += batch) batches.push(requests.slice(s, s + batch));
  await Promise.all(
    batches.map(async (b) => {
      const res = await lock.claimMany(b);
      done.push(Date.now() - fireAt);
      won += res.filter((r) => r.status === 'won').length;
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  if (profiling) {
    const { profile } = await profiling.post('Profiler.stop');
    writeFileSync(process.env.PROF as string, JSON.stringify(profile));
  }
  process.send?.({
    done,
    won,
    cpu: Math.round((cpu.user + cpu.system) / 1000),
    start: t0 - fireAt,
  });
  await lock.close();
  client.close();
  clearInterval(keepAlive);
}

if (process.argv[2] === 'child') void child();
else void parent();
