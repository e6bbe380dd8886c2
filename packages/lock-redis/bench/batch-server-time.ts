/**
 * Server and client time of the scale scenario's claims without the scheduler: `instances`
 * clients (one process) each `claimMany` the same `jobs` fires at once, in batches of `batch`
 * (the scheduler's default 256, at most 4 in flight: all at once here). Prints, per round, the
 * wall time until the last client has every answer, the server's `usec_per_call` of `EVALSHA`
 * and its total script time per claim (won and lost mixed), and the client CPU per claim.
 *
 * Run: `npx tsx --conditions=source bench/batch-server-time.ts [jobs=1000] [instances=4] [rounds=5]`
 * (`PROFILE=<file prefix>` also writes a CPU profile of the client side of each round)
 * (starts its own `redis-server`).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import type { ClaimRequest } from '@fleetcron/core';
import { startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { RedisLock } from '../src/index.js';

const jobs = Number(process.argv[2] ?? 1000);
const instances = Number(process.argv[3] ?? 4);
const rounds = Number(process.argv[4] ?? 5);
const batch = 256;

const server = await startRedis();
const admin = new Redis(server.url);
const clients = Array.from({ length: instances }, () => new Redis(server.url));
await Promise.all(clients.map((c) => c.ping()));
const locks = clients.map((c, i) => new RedisLock(c, { prefix: `b${i % 1}` }));

async function evalStats(): Promise<{ calls: number; usec: number; cpu: number }> {
  const info = (await admin.info('commandstats')) + (await admin.info('cpu'));
  let calls = 0;
  let usec = 0;
  const cpu = [...info.matchAll(/used_cpu_(?:user|sys):([\d.]+)/g)].reduce(
    (s, m) => s + Number(m[1]),
    0,
  );
  for (const m of info.matchAll(/cmdstat_(evalsha|eval):calls=(\d+),usec=(\d+)/g)) {
    calls += Number(m[2]);
    usec += Number(m[3]);
  }
  return { calls, usec, cpu };
}

const summary: string[] = [];
/** `PROFILE=<file prefix>`: a CPU profile of the client side of each round. */
const profiler = process.env.PROFILE ? new Session() : undefined;
profiler?.connect();
const post = (method: string) =>
  new Promise<unknown>((resolve) => profiler?.post(method, (_e, r) => resolve(r)));
for (let round = 0; round < rounds + 1; round++) {
  const fireAt = await admin
    .time()
    .then(([s, us]) => Number(s) * 1000 + Math.floor(Number(us) / 1000));
  const requests = (owner: string): ClaimRequest[] =>
    Array.from({ length: jobs }, (_, j) => ({
      key: `scale-r${round}-${j}`,
      fireAt,
      owner,
      leaseMs: 30_000,
      exclusive: true,
    }));
  const all = locks.map((_, i) => requests(`i${i}`));
  const before = await evalStats();
  if (profiler) await post('Profiler.enable').then(() => post('Profiler.start'));
  const cpu = process.cpuUsage();
  const began = performance.now();
  const answered = await Promise.all(
    locks.map(async (lock, i) => {
      const mine = all[i]!;
      const parts: Promise<unknown>[] = [];
      for (let at = 0; at < mine.length; at += batch)
        parts.push(lock.claimMany(mine.slice(at, at + batch)));
      await Promise.all(parts);
      return performance.now() - began;
    }),
  );
  const used = process.cpuUsage(cpu);
  if (profiler) {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(`${process.env.PROFILE}-${round}.cpuprofile`, JSON.stringify(profile));
  }
  const after = await evalStats();
  const claims = jobs * instances;
  const line = `round ${round}: last answer ${Math.max(...answered).toFixed(1)} ms; server script ${((after.usec - before.usec) / claims).toFixed(2)} us/claim (cpu ${(((after.cpu - before.cpu) * 1e6) / claims).toFixed(2)} us/claim, ${after.calls - before.calls} calls, ${((after.usec - before.usec) / 1000).toFixed(1)} ms); client cpu ${((used.user + used.system) / claims).toFixed(2)} us/claim`;
  if (round > 0) summary.push(line);
  console.log(line);
}
for (const c of clients) c.disconnect();
admin.disconnect();
await server.close();
