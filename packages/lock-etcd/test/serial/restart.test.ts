// The many-jobs restart scenarios (issue #25) on EtcdLock: lock only, then on EtcdStore, every
// child process on a client of its own. A file of test/serial/: it runs alone, after every other
// test file (`pnpm test:serial`), because its 8 processes measure the machine.
import { runRestartConformance } from '@fleetcron/conformance';
import { etcdEndpoints } from '@fleetcron/testkit/vitest';
import { lockFixtures } from '../fixture.js';
import { storeFixtures } from '../store-fixture.js';

const endpoints = etcdEndpoints();
runRestartConformance({
  name: 'etcd',
  create: lockFixtures(endpoints),
  store: storeFixtures(endpoints),
  knownFailures: {
    restartManyJobsLockOnly:
      '#25: on etcd on 2 cores the catch-up of 4 × 2,000 jobs can outlast the first fires after the restart (CI of 6a0e8e3: catch-up claims until +3.6 s, 406 of 8,000 later fires answered busy); passed in the CI runs before it; capacity, not a lost-fire bug (docs/performance/restart.md)',
    restartManyJobsWithStore:
      '#25: 4 processes × 2,000 jobs every 3 s with a store do not keep up on etcd on 2 cores; wins are answered after their lease (docs/performance/restart.md)',
  },
});
