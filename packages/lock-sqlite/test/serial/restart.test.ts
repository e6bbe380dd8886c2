// The many-jobs restart scenarios (issue #25) on SqliteLock: lock only, then on SqliteStore, every
// child process on the file through a client of its own. A file of test/serial/: it runs alone,
// after every other test file (`pnpm test:serial`), because its 8 processes measure the machine.
import { runRestartConformance } from '@fleetcron/conformance';
import { lockFixtures } from '../fixture.js';
import { storeFixtures } from '../store-fixture.js';

runRestartConformance({ name: 'sqlite', create: lockFixtures(), store: storeFixtures() });
