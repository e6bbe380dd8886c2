// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runFleetConformance, runLockConformance } from '@fleetcron/conformance';
import { SQLITE_LOCK_CAPABILITIES } from '../src/index.js';
import { fileFaults, lockFixtures } from './fixture.js';

runLockConformance({
  name: 'sqlite',
  create: lockFixtures(),
  capabilities: SQLITE_LOCK_CAPABILITIES,
  // No server: the fault scenarios break the file instead (see fileFaults). A short busy_timeout
  // so that claims queued behind a held write lock really time out with the typed error.
  faults: async () => fileFaults({ busyTimeoutMs: 300 }, 1500),
  // The collector runs every second; a pass deletes up to 500 records per table.
  collectionLagMs: 3000,
});

runFleetConformance({ name: 'sqlite', create: lockFixtures() });
