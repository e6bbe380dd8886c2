// PostgresElector through the shared elector suite (the scenarios hold the assertions).
import { runElectorConformance } from '@fleetcron/conformance';
import { dedicatedPostgres, postgresDatabase } from '@fleetcron/testkit/vitest';
import { electorFixtures } from './elector-fixture.js';

const faults = dedicatedPostgres(electorFixtures);
runElectorConformance({ name: 'postgres', create: electorFixtures(postgresDatabase()), faults });
