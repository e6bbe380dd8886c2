// Wires the Redis elector into the shared elector suite; each registered scenario holds its own
// assertions (packages/conformance/src/elector), so this file has no expect() of its own.
import { runElectorConformance } from '@fleetcron/conformance';
import { startRedis } from '@fleetcron/testkit';
import { electorFixture } from './elector-fixture.js';
import { sharedUrl } from './fixture.js';

runElectorConformance({
  name: 'redis',
  capabilities: { minTtlMs: 1, ttlGranularityMs: 1, durable: false, clock: 'backend' },
  create: () => electorFixture(sharedUrl()),
  faults: async () => {
    const server = await startRedis({ strategy: 'managed' });
    return { create: () => electorFixture(server.url), server, close: () => server.close() };
  },
});
