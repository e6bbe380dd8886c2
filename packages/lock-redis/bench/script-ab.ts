/**
 * Server time of the claim script against an older version of it (A/B, interleaved, so load
 * from other work hits both alike): per round, `jobs` won claims (fresh jobs), then 3 × `jobs`
 * lost claims (other owners, same fires), each as single calls (`per 1`) and as batch calls of
 * 128 (`per 128`), pipelined. Prints the median and the minimum over the rounds of the server's
 * `usec_per_call` share per claim (`INFO commandstats`) and of its main-thread CPU per claim
 * (`INFO cpu`, which also counts reading and writing the commands), and the same for the floor
 * (`SET k owner PX 30000 NX`, single calls).
 *
 * Run: `npx tsx --conditions=source bench/script-ab.ts [rev=HEAD~1] [jobs=2000] [rounds=7]`
 * (starts its own `redis-server`; `rev` must hold the layout-1 script, 5 KEYS per request; this
 * build's script takes a call's requests packed into one argument, see scripts.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { CLAIM } from '../src/scripts.js';

const rev = process.argv[2] ?? 'HEAD~1';
const jobs = Number(process.argv[3] ?? 2000);
const rounds = Number(process.argv[4] ?? 7);
const oldFile = join(mkdtempSync(join(tmpdir(), 'script-ab-')), 'scripts.ts');
writeFileSync(
  oldFile,
  execFileSync('git', ['show', `${rev}:packages/lock-redis/src/scripts.ts`], { encoding: 'utf8' }),
);
const OLD = ((await import(oldFile)) as { CLAIM: string }).CLAIM;

const server = await startRedis();
const redis = new Redis(server.url);
const sample = async () => {
  const info = (await redis.info('commandstats')) + (await redis.info('cpu'));
  const usec = Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(info)?.[1] ?? 0);
  const cpu =
    Number(/used_cpu_user_main_thread:([\d.]+)/.exec(info)?.[1] ?? 0) +
    Number(/used_cpu_sys_main_thread:([\d.]+)/.exec(info)?.[1] ?? 0);
  return { usec, cpu: cpu * 1e6 };
};
type Build = (tag: string, fireAt: number) => { keys: string[]; args: string[] };
/** `packed`: the requests' arguments go in one string (this build's script), else one by one. */
const variants: Record<string, { sha: string; build: Build; packed?: boolean }> = {
  [`old (${rev})`]: {
    sha: (await redis.script('LOAD', OLD)) as string,
    build: (tag, fireAt) => ({
      keys: [`${tag}:f:${fireAt}`, `${tag}:fires`, `${tag}:leases`, `${tag}:token`, `${tag}:mark`],
      args: [String(fireAt), 'OWNER', '30000', '1', ''],
    }),
  },
  new: {
    sha: (await redis.script('LOAD', CLAIM)) as string,
    build: (tag, fireAt) => ({
      keys: [`${tag}:f:${fireAt}`, `${tag}:fires`, `${tag}:j`],
      args: [`${fireAt}|x30000||`, 'OWNER'],
    }),
    packed: true,
  },
};

const figures = new Map<string, { usec: number[]; cpu: number[] }>();
async function measure(label: string, claims: number, send: () => Promise<unknown>) {
  const before = await sample();
  await send();
  const after = await sample();
  const row = figures.get(label) ?? { usec: [], cpu: [] };
  row.usec.push((after.usec - before.usec) / claims);
  row.cpu.push((after.cpu - before.cpu) / claims);
  figures.set(label, row);
}
for (let round = 0; round < rounds; round++) {
  for (const per of [1, 128]) {
    for (const [name, { sha, build, packed }] of Object.entries(variants)) {
      const fireAt = Date.now();
      const calls = (owner: string) => {
        const sent: Promise<unknown>[] = [];
        for (let i = 0; i < jobs; i += per) {
          const keys: string[] = [];
          const args: string[] = [];
          for (let j = i; j < Math.min(jobs, i + per); j++) {
            const one = build(`{ab-${round}-${per}-${name}:${j}}`, fireAt);
            keys.push(...one.keys);
            const ownerArg = packed ? `${Buffer.byteLength(owner)}:${owner}` : owner;
            for (const arg of one.args) args.push(arg === 'OWNER' ? ownerArg : arg);
          }
          const argv = packed ? [args.join('')] : args;
          sent.push(redis.evalsha(sha, keys.length, ...keys, '300000', '250', ...argv));
        }
        return Promise.all(sent);
      };
      await measure(`${name} per ${per} won`, jobs, () => calls('a'));
      await measure(`${name} per ${per} lost`, 3 * jobs, async () => {
        for (const owner of ['b', 'c', 'd']) await calls(owner);
      });
    }
  }
}
// the floor: SET k owner PX 30000 NX, single calls only
for (let round = 0; round < rounds; round++) {
  const floor = (owner: string) =>
    Promise.all(
      Array.from({ length: jobs }, (_, j) =>
        redis.set(`{ab-floor-${round}:${j}}`, owner, 'PX', 30_000, 'NX'),
      ),
    );
  await measure('floor SET NX PX per 1 won', jobs, () => floor('a'));
  await measure('floor SET NX PX per 1 lost', 3 * jobs, async () => {
    for (const owner of ['b', 'c', 'd']) await floor(owner);
  });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(
  'µs per claim: script (commandstats) median / min, server main-thread CPU median / min',
);
for (const [label, { usec, cpu }] of figures) {
  console.log(
    `${label.padEnd(32)} ${median(usec).toFixed(2)} / ${Math.min(...usec).toFixed(2)}   ${median(cpu).toFixed(2)} / ${Math.min(...cpu).toFixed(2)}`,
  );
}
redis.disconnect();
await server.close();
