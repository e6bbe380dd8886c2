// SqliteStore through the shared store suite (the scenarios hold the assertions; ./fixture.ts):
// a file per fixture, no server.
import { runStoreConformance } from '@fleetcron/conformance';
import { storeFixtures } from './fixture.js';

runStoreConformance({ name: 'sqlite', create: storeFixtures() });
