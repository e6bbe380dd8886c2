/**
 * By-hand measurement (not a test): how long a stored-schedule change takes to reach every
 * `ScheduleServer` serving its handler on one SQLite file (watchers poll the change counter),
 * and what one poll costs.
 *
 *   NODE_OPTIONS=--conditions=source ../../node_modules/.bin/tsx \
 *     scripts/measure-schedule-propagation.ts [changes] [servers] [schedules]
 *
 * Propagation: each server is a Scheduler (MemoryLock, not started: only its job list matters)
 * with a ScheduleServer on its own `SqliteStore` (own worker thread and connection, default
 * `schedulePollMs` 250). An admin store updates one schedule `changes` times, one at a time, each
 * at a random phase of the polls; the time from the update's answer until every server serves
 * the new version (checked every millisecond) is one sample. Poll cost: on a file holding `schedules` schedules, 2,000 polls
 * with nothing changed, one at a time: wall time and CPU time (all threads) per poll.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLock, type ScheduleDefinition, Scheduler, ScheduleServer } from '@fleetcron/core';
import { SqliteStore } from '../src/index.js';

const CHANGES = Number(process.argv[2] ?? 100);
const SERVERS = Number(process.argv[3] ?? 4);
const SCHEDULES = Number(process.argv[4] ?? 10_000);
const POLLS = 2_000;

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const def = (data: number): ScheduleDefinition => ({
  handler: 'h',
  trigger: { kind: 'every', ms: 3_600_000, anchor: 0 },
  data,
  enabled: true,
  options: {},
});

const dir = mkdtempSync(join(tmpdir(), 'fleetcron-measure-sched-'));
const file = join(dir, 'fleetcron.db');
const stores: SqliteStore[] = [];
const open = (options = {}) => {
  const store = new SqliteStore(file, options);
  stores.push(store);
  return store;
};
try {
  const admin = open();
  await admin.createSchedule('measured', def(0), { by: 'measure' });
  const servers = await Promise.all(
    Array.from({ length: SERVERS }, async () => {
      const scheduler = new Scheduler({ lock: new MemoryLock() });
      const s = new ScheduleServer({ scheduler, store: open(), handlers: { h: () => {} } });
      await s.start();
      return s;
    }),
  );
  const servesAll = (version: number) =>
    servers.every((s) => s.served().some((x) => x.version === version));
  while (!servesAll(1)) await tick();
  const samples: number[] = [];
  let version = 1;
  for (let i = 1; i <= CHANGES; i++) {
    // a random phase against the 250 ms polls (right after one was seen, the next is 250 ms away)
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 250));
    const changed = await admin.replaceSchedule('measured', def(i), {
      by: 'measure',
      expectedVersion: version,
    });
    version = changed.version;
    const from = performance.now();
    while (!servesAll(version)) await tick();
    samples.push(performance.now() - from);
  }
  samples.sort((a, b) => a - b);
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  console.log(
    `sqlite, ${SERVERS} servers, ${CHANGES} changes: propagation p50 ${ms(quantile(samples, 0.5))}, p99 ${ms(quantile(samples, 0.99))}, max ${ms(samples.at(-1) ?? Number.NaN)}`,
  );
  for (const s of servers) await s.stop();

  // poll cost on a file with SCHEDULES schedules (the poll's own request, nothing changed)
  const writer = open({ synchronous: 'NORMAL' });
  for (let i = 0; i < SCHEDULES; i++) {
    await writer.createSchedule(`s${i}`, def(i), { by: 'measure' });
  }
  const watcher = open();
  const executor = (
    watcher as unknown as { executor: { run<T>(op: string, a: unknown): Promise<T> } }
  ).executor;
  const poll = () => executor.run('scheduleChanges', { after: SCHEDULES + 1, limit: 1_000 });
  await poll();
  const cpu = process.cpuUsage();
  const from = performance.now();
  for (let i = 0; i < POLLS; i++) await poll();
  const wallUs = ((performance.now() - from) * 1000) / POLLS;
  const used = process.cpuUsage(cpu);
  const cpuUs = (used.user + used.system) / POLLS;
  console.log(
    `sqlite, ${SCHEDULES} schedules: one poll with nothing changed ${wallUs.toFixed(0)} µs wall, ${cpuUs.toFixed(0)} µs CPU (all threads); at 250 ms: ${((cpuUs * 4) / 1000).toFixed(2)} ms CPU/s per watching store`,
  );
} finally {
  await Promise.all(stores.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
}
