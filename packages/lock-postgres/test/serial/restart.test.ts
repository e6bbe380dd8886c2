// The many-jobs restart scenarios (issue #25) on PostgresLock: lock only, then on PostgresStore,
// every child process on a pool of its own. A file of test/serial/: it runs alone, after every
// other test file (`pnpm test:serial`), because its 8 processes measure the machine.
import { runRestartConformance } from '@fleetcron/conformance';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { lockFixtures } from '../fixture.js';
import { storeFixtures } from '../store-fixture.js';

const url = postgresDatabase();
runRestartConformance({ name: 'postgres', create: lockFixtures(url), store: storeFixtures(url) });
