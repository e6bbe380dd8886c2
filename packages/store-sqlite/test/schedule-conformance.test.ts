// SqliteStore's stored schedules through the shared suite (the scenarios hold the assertions;
// ./fixture.ts: a new file per fixture, each store on its own connection and worker thread).
// SQLite has no push connection to kill: watchers poll a change counter kept in the file.
import { runScheduleStoreConformance } from '@fleetcron/conformance';
import { storeFixtures } from './fixture.js';

runScheduleStoreConformance({
  name: 'sqlite',
  create: storeFixtures(),
  dropPush: {
    unsupported:
      'SQLite has no push connection; watchers poll the change counter written with each change, and a failed poll resyncs when it recovers (test/schedules.test.ts)',
  },
});
