// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runStoreConformance } from '@fleetcron/conformance';
import { storeFixtures } from './fixture.js';

runStoreConformance({ name: 'sqlite', create: storeFixtures() });
