import { runLockConformance } from '@fleetcron/conformance';
import { startRedis } from '@fleetcron/testkit';
import { afterAll } from 'vitest';
import { lockFixture, sharedServer } from './fixture.js';

const shared = sharedServer();
afterAll(() => shared.close());

const capabilities = { minLeaseMs: 1, leaseGranularityMs: 1, durable: false, clock: 'backend' } as const;

runLockConformance({
  name: 'redis',
  capabilities,
  create: async () => lockFixture((await shared.get()).url),
  faults: async () => {
    const server = await startRedis({ strategy: 'managed' });
    return { create: () => lockFixture(server.url), server, close: () => server.close() };
  },
});
