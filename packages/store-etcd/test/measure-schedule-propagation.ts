// By-hand measurement (not a test): how long a stored-schedule change takes to reach every
// `ScheduleServer` serving its handler on etcd (push through the watch), the etcd counterpart of
// the repository's scripts/measure-schedule-propagation.ts. Run it and copy the figures to the
// README:
//   npx tsx --conditions=source test/measure-schedule-propagation.ts [changes] [servers]
// Each server is a Scheduler (MemoryLock, not started: only its job list matters) with a
// ScheduleServer on an EtcdStore of its own client. An admin store updates one schedule
// `changes` times, one at a time; the time from the update's answer until every server serves
// the new version (polled every millisecond) is one sample. Also prints the bytes of one
// stored schedule's key and value.
import { MemoryLock, type ScheduleDefinition, Scheduler, ScheduleServer } from '@fleetcron/core';
import { startEtcd } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { EtcdStore } from '../src/index.js';

const CHANGES = Number(process.argv[2] ?? 200);
const SERVERS = Number(process.argv[3] ?? 4);
const prefix = 'measure-sched/';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const definition = (data: number): ScheduleDefinition => ({
  handler: 'h',
  trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' },
  data: { customer: `customer-${data}`, n: data },
  enabled: true,
  options: {},
});

const etcd = await startEtcd({ strategy: 'local' });
const clients: Etcd3[] = [];
const open = () => {
  const client = new Etcd3({ hosts: [...etcd.endpoints] });
  clients.push(client);
  return new EtcdStore(client, { prefix });
};
try {
  const admin = open();
  await admin.createSchedule('measured', definition(0), { by: 'measure' });
  const servers = await Promise.all(
    Array.from({ length: SERVERS }, async () => {
      const store = open();
      const scheduler = new Scheduler({ lock: new MemoryLock() });
      const s = new ScheduleServer({ scheduler, store, handlers: { h: () => {} } });
      await s.start();
      return { s, store };
    }),
  );
  const servesAll = (version: number) =>
    servers.every(({ s }) => s.served().some((x) => x.version === version));
  while (!servesAll(1)) await tick();
  const samples: number[] = [];
  let version = 1;
  for (let i = 1; i <= CHANGES; i++) {
    const changed = await admin.replaceSchedule('measured', definition(i), {
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
  const [kv] = (await clients[0]!.getAll().prefix(`${prefix}s/`).exec()).kvs;
  console.log(
    `etcd, ${SERVERS} servers, ${CHANGES} changes: propagation p50 ${ms(quantile(samples, 0.5))}, p99 ${ms(quantile(samples, 0.99))}, max ${ms(samples.at(-1) ?? Number.NaN)}; one schedule: ${kv!.key.length + kv!.value.length} bytes of key and value`,
  );
  for (const { s, store } of servers) {
    await s.stop();
    await store.close();
  }
  await admin.close();
} finally {
  for (const client of clients) client.close();
  await etcd.close();
}
