// PostgresStore through the shared store suite (the scenarios hold the assertions; ./fixture.ts):
// a database of this file's own, a schema per fixture.
import { runStoreConformance } from '@fleetcron/conformance';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { storeFixtures } from './fixture.js';

runStoreConformance({ name: 'postgres', create: storeFixtures(postgresDatabase()) });
