// The many-jobs restart scenarios (issue #25) on RedisLock: lock only, then on RedisStore, every
// child process on a client of its own. A file of test/serial/: it runs alone, after every other
// test file (`pnpm test:serial`), because its 8 processes measure the machine.
import { runRestartConformance } from '@fleetcron/conformance';
import { redisUrl } from '@fleetcron/testkit/vitest';
import { lockFixtures } from '../fixture.js';
import { storeFixtures } from '../store-fixture.js';

const url = redisUrl();
runRestartConformance({ name: 'redis', create: lockFixtures(url), store: storeFixtures(url) });
