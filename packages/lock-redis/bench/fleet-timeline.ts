/**
 * Where the scale scenario's lateness goes on Redis, one timeline per instance process:
 * `instances` processes each run a real `Scheduler` on a `RedisLock` with `jobs` jobs due at one
 * instant (as `pnpm bench --scenarios scale` does), and report, in ms after the fire time, when
 * each `claimMany` was sent and answered, when the first and last run started, the process CPU
 * used around the wake, and the server's script time. `mode` is `batched` or `leader`-like
 * (`one`: a single instance claims alone, every claim won).
 *
 * Run: `npx tsx --conditions=source bench/fleet-timeline.ts [jobs=1000] [instances=4] [rounds=3]`
 * (starts its own `redis-server`; set PROFILE_DIR=<dir> for a CPU profile of each child).
 */
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { at, type ClaimRequest, type Lock, Scheduler } from '@fleetcron/core';
import { startRedis } from '@fleetcron/testkit';
import { Redis } from 'ioredis';
import { RedisLock } from '../src/index.js';

interface ChildReport {
  index: number;
  sends: number[];
  answers: number[];
  firstRun: number;
  lastRun: number;
  runs: number;
  cpuMs: number;
}

if (process.argv[2] === 'child') {
  const [url, prefix, jobsText, fireAtText, indexText] = process.argv.slice(3);
  const jobs = Number(jobsText);
  const fireAt = Number(fireAtText);
  const index = Number(indexText);
  const client = new Redis(url!);
  await client.ping();
  const inner = new RedisLock(client, { prefix: prefix! });
  const report: ChildReport = {
    index,
    sends: [],
    answers: [],
    firstRun: 0,
    lastRun: 0,
    runs: 0,
    cpuMs: 0,
  };
  const lock: Lock = Object.create(inner) as Lock;
  lock.claimMany = async (requests: readonly ClaimRequest[], options) => {
    report.sends.push(Date.now() - fireAt);
    const answer = await inner.claimMany(requests, options);
    report.answers.push(Date.now() - fireAt);
    return answer;
  };
  const scheduler = new Scheduler({ lock, instanceId: `i${index}`, leaseMs: 30_000 });
  let pending = jobs;
  let done = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  for (let job = 0; job < jobs; job++) {
    scheduler.add({
      name: `j${job}`,
      trigger: at(fireAt),
      run: (ctx) => {
        const late = ctx.startedAt.getTime() - fireAt;
        if (report.runs++ === 0) report.firstRun = late;
        report.lastRun = late;
      },
    });
  }
  scheduler.start();
  let cpu = process.cpuUsage();
  const profiler = process.env.PROFILE_DIR ? new Session() : undefined;
  profiler?.connect();
  setTimeout(
    () => {
      cpu = process.cpuUsage();
      profiler?.post('Profiler.enable', () => profiler.post('Profiler.start'));
    },
    fireAt - 20 - Date.now(),
  );
  // every claim answered (won or not) or 3 s
  const poll = setInterval(() => {
    if (
      report.answers.length > 0 &&
      report.sends.length === report.answers.length &&
      Date.now() > fireAt + 100
    ) {
      pending = 0;
    }
    if (pending === 0 || Date.now() > fireAt + 3_000) {
      clearInterval(poll);
      done();
    }
  }, 5);
  await finished;
  const used = process.cpuUsage(cpu);
  report.cpuMs = (used.user + used.system) / 1000;
  if (profiler) {
    const profile = await new Promise<unknown>((resolve) =>
      profiler.post('Profiler.stop', (_error, result) => resolve(result.profile)),
    );
    writeFileSync(
      `${process.env.PROFILE_DIR}/i${index}-${prefix}.cpuprofile`,
      JSON.stringify(profile),
    );
  }
  await scheduler.stop({ drainMs: 1_000 });
  client.disconnect();
  process.send!(report);
  process.exit(0);
} else {
  const jobs = Number(process.argv[2] ?? 1000);
  const instances = Number(process.argv[3] ?? 4);
  const rounds = Number(process.argv[4] ?? 3);
  const server = await startRedis();
  const admin = new Redis(server.url);
  const scriptUsec = async () => {
    const info = (await admin.info('commandstats')) + (await admin.info('cpu'));
    let usec = 0;
    for (const m of info.matchAll(/cmdstat_(?:evalsha|eval):calls=\d+,usec=(\d+)/g))
      usec += Number(m[1]);
    const cpu = [...info.matchAll(/used_cpu_(?:user|sys):([\d.]+)/g)].reduce(
      (s, m) => s + Number(m[1]),
      0,
    );
    return { usec, cpu };
  };
  for (let round = 0; round < rounds; round++) {
    const fireAt = Date.now() + 5_000; // time for the children to start (tsx) and add their jobs
    const before = await scriptUsec();
    const reports = await Promise.all(
      Array.from({ length: instances }, (_, i) => {
        const child = fork(
          process.argv[1]!,
          ['child', server.url, `r${round}`, String(jobs), String(fireAt), String(i)],
          {
            execArgv: process.execArgv,
          },
        );
        return new Promise<ChildReport>((resolve, reject) => {
          child.once('message', (m) => resolve(m as ChildReport));
          child.once('error', reject);
        });
      }),
    );
    const after = await scriptUsec();
    console.log(
      `round ${round}: server scripts ${((after.usec - before.usec) / 1000).toFixed(1)} ms, server cpu ${((after.cpu - before.cpu) * 1000).toFixed(1)} ms`,
    );
    for (const r of reports) {
      console.log(
        `  i${r.index}: sends ${r.sends.join(',')} answers ${r.answers.join(',')} runs ${r.runs} first ${r.firstRun} last ${r.lastRun} cpu ${r.cpuMs.toFixed(0)} ms`,
      );
    }
  }
  admin.disconnect();
  await server.close();
}
