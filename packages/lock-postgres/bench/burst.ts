/**
 * The scale scenario's claims without the scheduler: `instances` processes, each with its own
 * pool of 4 connections, `claimMany` the same `jobs` fires at the same instant, in batches of
 * 256 (the scheduler's default), every batch at once. Prints, per round, when each batch was
 * answered (ms after the fire time; `W`: its requests were won) and the server's CPU for the
 * round (all `postgres` processes, from `/proc`, 10 ms ticks).
 *
 * `order=affinity`: each process sends first the batch it won in the previous round (rotated
 * by process in round 0, so every batch has one first sender) and the other batches once its
 * own answers are in: what the server does when the instances that are likely to lose a fire
 * claim it after its likely winner, instead of all at once.
 *
 * Run (starts its own server):
 * `npx tsx --conditions=source bench/burst.ts [jobs=1000] [instances=4] [rounds=6] [order=all|affinity]`
 */
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ClaimRequest } from '@fleetcron/core';
import { startPostgres } from '@fleetcron/testkit';
import pg from 'pg';
import { PostgresLock } from '../src/index.js';

const BATCH = 256;
const POOL = 4;
const SCHEMA = 'burst';

interface Round {
  round: number;
  fireAt: number;
  jobs: number;
  affinity: boolean;
}

const batchesOf = (jobs: number): number => Math.ceil(jobs / BATCH);

function requestsOf(r: Round, batch: number, owner: string): ClaimRequest[] {
  const requests: ClaimRequest[] = [];
  for (let i = batch * BATCH; i < Math.min(r.jobs, (batch + 1) * BATCH); i++) {
    requests.push({ key: `job-${i}`, fireAt: r.fireAt, owner, leaseMs: 30_000, exclusive: false });
  }
  return requests;
}

/** One instance: answers each round with its batches' answer times. */
async function instance(url: string, index: number): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: POOL, idleTimeoutMillis: 0 });
  pool.on('error', () => {});
  const lock = new PostgresLock(pool, { schema: SCHEMA });
  const owner = `instance-${index}`;
  const claimMany = (requests: ClaimRequest[]) => lock.claimMany(requests);
  // warm every connection's session (the function's compiled body and its statements' plans)
  const warm = Array.from({ length: POOL }, (_, c) =>
    claimMany(
      requestsOf({ round: -1, fireAt: Date.now(), jobs: 64, affinity: false }, 0, owner).map(
        (q) => ({ ...q, key: `warm-${index}-${c}-${q.key}` }),
      ),
    ),
  );
  await Promise.all(warm);
  let won = new Set<number>([index]);
  process.on('message', async (r: Round) => {
    await new Promise((resolve) => setTimeout(resolve, r.fireAt - Date.now()));
    const answers: string[] = [];
    const wonNow = new Set<number>();
    const send = async (batch: number) => {
      const reply = await claimMany(requestsOf(r, batch, owner));
      const wins = reply.filter((a) => a.status === 'won').length;
      if (wins > 0) wonNow.add(batch);
      answers.push(`${batch}:+${Date.now() - r.fireAt}${wins ? 'W' : ''}`);
    };
    const all = Array.from({ length: batchesOf(r.jobs) }, (_, b) => b);
    if (r.affinity) {
      const first = all.filter((b) => won.has(b));
      await Promise.all(first.map(send));
      await Promise.all(all.filter((b) => !won.has(b)).map(send));
    } else await Promise.all(all.map(send));
    won = wonNow;
    process.send?.(`instance ${index}: ${answers.join(' ')}`);
  });
  process.send?.('ready');
}

/** Fields of `/proc/<pid>/stat` after the command name (state is index 0), or `null` once gone. */
function statOf(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? null;
  } catch {
    return null; // the process ended meanwhile
  }
}

/** CPU time so far of this server: its postmaster and every process it started, ms (10 ms ticks). */
function serverCpuMs(postmaster: number): number {
  const children = execFileSync('pgrep', ['-P', String(postmaster)])
    .toString()
    .trim()
    .split('\n');
  let ticks = 0;
  for (const pid of [postmaster, ...children.map(Number)]) {
    const fields = statOf(pid);
    if (fields) ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
  }
  return ticks * 10;
}

async function main(): Promise<void> {
  const jobs = Number(process.argv[2] ?? 1000);
  const instances = Number(process.argv[3] ?? 4);
  const rounds = Number(process.argv[4] ?? 6);
  const affinity = process.argv[5] === 'affinity';
  const server = await startPostgres({ settings: { max_connections: 300 } });
  const url = await server.createDatabase('burst');
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  await new PostgresLock(admin, { schema: SCHEMA }).migrate();
  const { rows } = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const postmaster = Number(statOf(rows[0]?.pid ?? 0)?.[1]); // a backend's parent
  await admin.end();
  const script = new URL(import.meta.url).pathname;
  const children = Array.from({ length: instances }, (_, i) =>
    fork(script, ['instance', url, String(i)], { execArgv: process.execArgv }),
  );
  const next = (child: (typeof children)[number]) =>
    new Promise<string>((resolve) => child.once('message', (m) => resolve(String(m))));
  try {
    await Promise.all(children.map(next));
    console.log(
      `${jobs} jobs × ${instances} instances, batches of ${BATCH}, order ${affinity ? 'affinity' : 'all at once'}`,
    );
    for (let round = 0; round < rounds; round++) {
      const r: Round = { round, fireAt: Date.now() + 300, jobs, affinity };
      const cpu = serverCpuMs(postmaster);
      const lines = await Promise.all(
        children.map((child) => {
          const line = next(child);
          child.send(r);
          return line;
        }),
      );
      // keys are the same every round; a new fire time makes them new fires
      console.log(`round ${round}: server CPU ${serverCpuMs(postmaster) - cpu} ms`);
      for (const line of lines) console.log(`  ${line}`);
    }
  } finally {
    for (const child of children) child.kill();
    await server.close();
  }
}

if (process.argv[2] === 'instance')
  await instance(process.argv[3] as string, Number(process.argv[4]));
else await main();
