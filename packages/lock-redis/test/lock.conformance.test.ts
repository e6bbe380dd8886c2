// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runLockConformance } from '@fleetcron/conformance';
import { startRedis } from '@fleetcron/testkit';
import { lockFixture, sharedUrl } from './fixture.js';

const capabilities = {
  minLeaseMs: 1,
  leaseGranularityMs: 1,
  durable: false,
  clock: 'backend',
  earlyToleranceMs: 250,
  durableMark: false,
} as const;

runLockConformance({
  name: 'redis',
  capabilities,
  create: async () => lockFixture(sharedUrl()),
  faults: async () => {
    const server = await startRedis({ strategy: 'managed' });
    return { create: () => lockFixture(server.url), server, close: () => server.close() };
  },
});
