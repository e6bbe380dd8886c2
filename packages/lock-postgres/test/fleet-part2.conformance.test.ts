// Real Schedulers on PostgresLock, in real time, through the shared fleet suite (its scenarios
// hold the assertions; ./fixture.ts), with the opt-in prepared statements (the lock suite in
// conformance.test.ts runs the default): part 2 of 2, so that the two parts run side by side. A
// database of its own on the run's shared server.
import { runFleetConformance } from '@fleetcron/conformance';
import { dedicatedPostgres, postgresDatabase } from '@fleetcron/testkit/vitest';
import { lockFixtures } from './fixture.js';

const url = postgresDatabase();
const prepared = (at: () => Promise<string>) => lockFixtures(at, { preparedStatements: true });
const fleet = { create: prepared(url), faults: dedicatedPostgres(prepared) };
runFleetConformance({
  name: 'postgres (prepared statements)',
  ...fleet,
  part: { index: 2, of: 2 },
});
