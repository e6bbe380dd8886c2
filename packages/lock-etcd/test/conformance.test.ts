// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runFleetConformance, runLockConformance } from '@fleetcron/conformance';
import { startEtcd } from '@fleetcron/testkit';
import { afterAll } from 'vitest';
import { etcdFixture, lazy } from './fixture.js';

// One shared server for the whole file; every fixture gets its own key prefix. The fleet suite
// runs in this file, after the lock suite, so that it never shares the CPU with the lock suite's
// 10,000-claim storage scenario (real-time schedules are sensitive to a starved etcd).
const shared = lazy(() => startEtcd());
afterAll(async () => {
  await (await shared()).close();
});

runLockConformance({
  name: 'etcd',
  capabilities: {
    ...{ minLeaseMs: 2000, leaseGranularityMs: 1000, durable: true, clock: 'client' },
    earlyToleranceMs: 250,
    backendTimeBoundMs: 100,
    durableMark: true,
  },
  create: async () => etcdFixture(await shared()),
  // A dedicated server the fault scenarios restart (etcd cannot drop connections on demand:
  // the testkit restarts it for dropConnections too).
  faults: async () => {
    const server = await startEtcd({ strategy: 'managed' });
    return {
      create: () => etcdFixture(server),
      server: {
        restart: () => server.restart(),
        dropConnections: () => server.dropConnections(),
        pause: () => server.pause(),
        resume: () => server.resume(),
        stop: () => server.stop(),
        start: () => server.start(),
      },
      close: () => server.close(),
    };
  },
  // Records live until fireAt + windowMs + skewToleranceMs (= windowMs) + up to one bucket (1 s
  // for small windows) + TTL rounding (1 s) + etcd's expiry loop (0.5 s).
  collectionLagMs: 5_000,
});

runFleetConformance({
  name: 'etcd',
  create: async () => etcdFixture(await shared()),
});
