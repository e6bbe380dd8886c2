// SqliteLock through the shared lock suite (the scenarios hold the assertions; ./fixture.ts). No
// server: the fault scenarios break the file instead (fileFaults), with a short busy_timeout so
// that claims queued behind a held write lock time out with the typed error. The fleet suite is
// in fleet-part1/2.conformance.test.ts, files of their own that run beside this one.
import { runLockConformance } from '@fleetcron/conformance';
import { fileFaults, lockFixtures } from './fixture.js';

const faults = async () => fileFaults({ busyTimeoutMs: 300 }, 1500);
// The collector runs every second; a pass deletes up to 500 records per table.
runLockConformance({ name: 'sqlite', create: lockFixtures(), faults, collectionLagMs: 3000 });
