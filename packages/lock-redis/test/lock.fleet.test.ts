// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runFleetConformance } from '@fleetcron/conformance';
import { lockFixture, sharedUrl } from './fixture.js';

// Real Schedulers on RedisLock, in real time, on the shared server (own prefix per fixture).

runFleetConformance({
  name: 'redis',
  create: async () => lockFixture(sharedUrl()),
  fires: 20, // instead of 30: keeps the package's run short on a shared 2-core machine
});
