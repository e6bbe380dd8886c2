// PostgresLock through the shared lock suite (the scenarios hold the assertions; ./fixture.ts).
// The fleet suite is in fleet-part1/2.conformance.test.ts, files of their own that run beside this
// one.
import { runLockConformance } from '@fleetcron/conformance';
import { dedicatedPostgres, postgresDatabase } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const url = postgresDatabase();
const faults = dedicatedPostgres(lockFixtures);
runLockConformance({ name: 'postgres', create: lockFixtures(url), faults });
