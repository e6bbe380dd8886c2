/**
 * Client and server CPU per batched claim and per batched release, this lock against another
 * build (`OLD_LOCK`), interleaved round by round in one run: the scale cell's shape without the
 * scheduler (`instances` clients in this process each `claimMany` the same `jobs` fires, in
 * batches of `batch`, all at once; then each `releaseMany`s the leases it won, in batches too).
 * Client CPU from `process.cpuUsage` (this process: the locks, ioredis, the parser), server CPU
 * from `INFO cpu` (main thread, user + sys), both per request; medians over the rounds. Every
 * round uses fresh job names, so the lock's key cache misses as in a one-shot scale cell. The
 * first round (JIT warm-up) is left out, unless `rounds` is 0: then only it is measured, the
 * code still cold as in a scale cell's instance process (run it in fresh processes, `ONLY=`).
 *
 * Run: `OLD_LOCK=<path of another build's src/index.ts> npx tsx --conditions=source
 * bench/batch-ab.ts [jobs=1000] [instances=4] [rounds=7] [batch=256]` (starts its own
 * `redis-server`; without `OLD_LOCK` it measures this build alone; `node --expose-gc --conditions=source
 * --import tsx bench/batch-ab.ts ...` collects garbage before each measured window).
 */
import { loadavg } from 'node:os';
import type { ClaimRequest, Lease } from '@fleetcron/core';
import { startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { RedisLock } from '../src/index.js';

const OldLock = process.env.OLD_LOCK
  ? ((await import(process.env.OLD_LOCK)) as { RedisLock: typeof RedisLock }).RedisLock
  : undefined;

const jobs = Number(process.argv[2] ?? 1000);
const instances = Number(process.argv[3] ?? 4);
const rounds = Number(process.argv[4] ?? 7);
const batch = Number(process.argv[5] ?? 256);

const server = await startRedis();
const admin = new Redis(server.url);
const clients = Array.from({ length: instances }, () => new Redis(server.url));
await Promise.all(clients.map((c) => c.ping()));

const serverCpu = async () => {
  const info = await admin.info('cpu');
  const user = Number(/used_cpu_user_main_thread:([\d.]+)/.exec(info)?.[1] ?? 0);
  const sys = Number(/used_cpu_sys_main_thread:([\d.]+)/.exec(info)?.[1] ?? 0);
  return (user + sys) * 1e6;
};
/** A full GC before each measured window (with `node --expose-gc`): no garbage carried over. */
const collect = () => (globalThis as { gc?: () => void }).gc?.();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const inBatches = <T, R>(items: T[], run: (part: T[]) => Promise<R[]>) => {
  const parts: Promise<R[]>[] = [];
  for (let at = 0; at < items.length; at += batch) parts.push(run(items.slice(at, at + batch)));
  return Promise.all(parts).then((answers) => answers.flat());
};

type Variant = { name: string; locks: RedisLock[] };
const all: Variant[] = [
  { name: 'new', locks: clients.map((c) => new RedisLock(c, { prefix: 'ab-new' })) },
  ...(OldLock
    ? [{ name: 'old', locks: clients.map((c) => new OldLock(c, { prefix: 'ab-old' })) }]
    : []),
];
/** `ONLY=new|old`: measure one variant (for a CPU profile of it). */
const variants = all.filter((v) => !process.env.ONLY || v.name === process.env.ONLY);
// as the scale scenario's warm-up cell: the scripts are loaded (no NOSCRIPT in the measured
// rounds), each instance has claimed and released once
for (const { name, locks } of variants) {
  const fireAt = Date.now();
  await Promise.all(
    locks.map(async (lock, i) => {
      const [won] = await lock.claimMany([
        { key: `warm-${name}`, fireAt, owner: `instance-${i}`, leaseMs: 30_000, exclusive: true },
      ]);
      if (won?.status === 'won') await lock.releaseMany([won.lease]);
    }),
  );
}
const rows = new Map<
  string,
  Record<'claimClient' | 'claimServer' | 'relClient' | 'relServer', number[]>
>();
const loads: number[] = [];

for (let round = 0; round <= rounds; round++) {
  // odd rounds run the variants in the other order, so neither always goes first
  const order = round % 2 === 0 ? variants : [...variants].reverse();
  for (const { name, locks } of order) {
    const fireAt = await admin
      .time()
      .then(([s, us]) => Number(s) * 1000 + Math.floor(Number(us) / 1000));
    const requests = locks.map((_, i) =>
      Array.from(
        { length: jobs },
        (_, j): ClaimRequest => ({
          key: `scale-${name}-r${round}-${j}`,
          fireAt,
          owner: `instance-${i}`,
          leaseMs: 30_000,
          exclusive: true,
        }),
      ),
    );
    collect();
    let s0 = await serverCpu();
    let c0 = process.cpuUsage();
    const answers = await Promise.all(
      locks.map((lock, i) => inBatches(requests[i]!, (part) => lock.claimMany(part))),
    );
    let c = process.cpuUsage(c0);
    let s = (await serverCpu()) - s0;
    const claims = jobs * instances;
    const won = answers.map((a) =>
      a.flatMap((r) => (r.status === 'won' ? [r.lease as Lease] : [])),
    );
    if (won.flat().length !== jobs)
      throw new Error(`${name}: ${won.flat().length} won, not ${jobs}`);
    const row = rows.get(name) ?? {
      claimClient: [],
      claimServer: [],
      relClient: [],
      relServer: [],
    };
    if (round > 0 || rounds === 0) {
      row.claimClient.push((c.user + c.system) / claims);
      row.claimServer.push(s / claims);
    }
    collect();
    s0 = await serverCpu();
    c0 = process.cpuUsage();
    const released = await Promise.all(
      locks.map((lock, i) => inBatches(won[i]!, (part) => lock.releaseMany(part))),
    );
    c = process.cpuUsage(c0);
    s = (await serverCpu()) - s0;
    if (released.flat().filter(Boolean).length !== jobs) throw new Error(`${name}: release failed`);
    if (round > 0 || rounds === 0) {
      row.relClient.push((c.user + c.system) / jobs);
      row.relServer.push(s / jobs);
    }
    rows.set(name, row);
  }
  if (round > 0 || rounds === 0) loads.push(loadavg()[0]!);
}

console.log(
  `${jobs} jobs x ${instances} instances, batches of ${batch}, ${rounds} rounds, load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
);
for (const [name, row] of rows) {
  console.log(
    `${name}: claimMany client ${median(row.claimClient).toFixed(2)} µs + server ${median(row.claimServer).toFixed(2)} µs per claim; releaseMany client ${median(row.relClient).toFixed(2)} µs + server ${median(row.relServer).toFixed(2)} µs per release`,
  );
}
for (const c of clients) c.disconnect();
admin.disconnect();
await server.close();
