// PostgresLock through the shared suites (the scenarios hold the assertions; ./fixture.ts).
import { runFleetConformance, runLockConformance } from '@fleetcron/conformance';
import { dedicatedPostgres, postgresDatabase } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const url = postgresDatabase();
const faults = dedicatedPostgres(lockFixtures);
runLockConformance({ name: 'postgres', create: lockFixtures(url), faults });
// Real schedulers, with the opt-in prepared statements (the lock suite above runs the default).
const prepared = (at: () => Promise<string>) => lockFixtures(at, { preparedStatements: true });
const fleet = { create: prepared(url), faults: dedicatedPostgres(prepared) };
runFleetConformance({ name: 'postgres (prepared statements)', ...fleet });
