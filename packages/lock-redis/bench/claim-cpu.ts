/**
 * CPU per single claim, the lock against its floor, as `pnpm bench`'s contention scenario
 * claims (every instance claims each fire at once, the winner releases, then the next fire),
 * but measured in CPU time, which other work on the machine disturbs far less than wall time:
 * client CPU (`process.cpuUsage`, all instances in this process) plus the server's main-thread
 * CPU (`INFO cpu`), per claim, median over interleaved rounds.
 *
 * Run: `npx tsx --conditions=source bench/claim-cpu.ts [instances=1,8,32] [steps=3000] [rounds=5]`
 * (`OLD_LOCK=<path of another build's src/index.ts>` adds it as `old`; `ONLY=lock|old|floor` runs
 * one variant; `PROFILE=<file prefix>` writes a CPU profile of each round)
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { RedisLock } from '../src/index.js';

/** Another build of the lock to compare with (`OLD_LOCK=<path of its index.ts>`), e.g. an older commit's `src`. */
const OldLock = process.env.OLD_LOCK
  ? ((await import(process.env.OLD_LOCK)) as { RedisLock: typeof RedisLock }).RedisLock
  : undefined;

const counts = (process.argv[2] ?? '1,8,32').split(',').map(Number);
const steps = Number(process.argv[3] ?? 3000);
const rounds = Number(process.argv[4] ?? 5);
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

const profiler = process.env.PROFILE ? new Session() : undefined;
profiler?.connect();
const post = (method: string) =>
  new Promise<unknown>((resolve) => profiler?.post(method, (_e, r) => resolve(r)));
const server = await startRedis();
const admin = new Redis(server.url);
const serverCpu = async () => {
  const info = await admin.info('cpu');
  const user = Number(/used_cpu_user_main_thread:([\d.]+)/.exec(info)?.[1] ?? 0);
  const sys = Number(/used_cpu_sys_main_thread:([\d.]+)/.exec(info)?.[1] ?? 0);
  return (user + sys) * 1e6;
};
type Claim = (fire: number) => Promise<(() => Promise<unknown>) | null>;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

for (const n of counts) {
  const clients = Array.from({ length: n }, () => new Redis(server.url));
  await Promise.all(clients.map((c) => c.ping()));
  const variants: Record<string, (i: number, key: string) => Claim> = {
    lock: (i, key) => {
      const lock = new RedisLock(clients[i]!, { prefix: 'cpu' });
      return async (fire) => {
        const r = await lock.claim({
          key,
          fireAt: fire,
          owner: `o${i}`,
          leaseMs: 30_000,
          exclusive: false,
        });
        return r.status === 'won' ? () => lock.release(r.lease) : null;
      };
    },
    ...(OldLock && {
      old: (i: number, key: string): Claim => {
        const lock = new OldLock(clients[i]!, { prefix: 'cpu-old' });
        return async (fire) => {
          const r = await lock.claim({
            key,
            fireAt: fire,
            owner: `o${i}`,
            leaseMs: 30_000,
            exclusive: false,
          });
          return r.status === 'won' ? () => lock.release(r.lease) : null;
        };
      },
    }),
    floor: (i, key) => async (fire) => {
      const id = `floor:${key}:${fire}`;
      const ok = await clients[i]!.set(id, `o${i}`, 'PX', 30_000, 'NX');
      return ok === 'OK' ? () => clients[i]!.eval(RELEASE, 1, id, `o${i}`) : null;
    },
  };
  const perClaim = new Map<string, { client: number[]; server: number[] }>();
  for (let round = 0; round < rounds; round++) {
    for (const [name, make] of Object.entries(variants)) {
      if (process.env.ONLY && name !== process.env.ONLY) continue;
      const key = `k-${n}-${round}-${name}`;
      const claimers = clients.map((_, i) => make(i, key));
      const base = Date.now() - 60_000;
      const s0 = await serverCpu();
      if (profiler) await post('Profiler.enable').then(() => post('Profiler.start'));
      const c0 = process.cpuUsage();
      for (let step = 0; step < steps; step++) {
        await Promise.all(
          claimers.map(async (claim) => {
            const release = await claim(base + step);
            if (release) await release();
          }),
        );
      }
      const c = process.cpuUsage(c0);
      if (profiler) {
        const { profile } = (await post('Profiler.stop')) as { profile: unknown };
        writeFileSync(
          `${process.env.PROFILE}-${name}-${n}-${round}.cpuprofile`,
          JSON.stringify(profile),
        );
      }
      const s = (await serverCpu()) - s0;
      const claims = steps * n;
      const row = perClaim.get(name) ?? { client: [], server: [] };
      row.client.push((c.user + c.system) / claims);
      row.server.push(s / claims);
      perClaim.set(name, row);
    }
  }
  const total = (name: string) => {
    const row = perClaim.get(name)!;
    return median(row.client) + median(row.server);
  };
  if (process.env.ONLY) {
    for (const c of clients) c.disconnect();
    continue;
  }
  for (const [name, row] of perClaim) {
    console.log(
      `${String(n).padStart(2)} instances ${name.padEnd(5)}: client ${median(row.client).toFixed(1)} µs + server ${median(row.server).toFixed(1)} µs per claim`,
    );
  }
  console.log(
    `${String(n).padStart(2)} instances floor/lock CPU per claim: ${(total('floor') / total('lock')).toFixed(2)}×`,
  );
  for (const c of clients) c.disconnect();
}
admin.disconnect();
await server.close();
