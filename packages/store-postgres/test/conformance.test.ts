// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runStoreConformance } from '@fleetcron/conformance';
import { isolatedPostgres } from '@fleetcron/testkit';
import { afterAll, inject } from 'vitest';
import { storeFixtures } from './fixture.js';

// A database of this file's own on the shared server (global setup); a schema per fixture.
let database: ReturnType<typeof isolatedPostgres> | undefined;
const databaseUrl = async () => {
  database ??= isolatedPostgres(inject('fleetcronPostgresUrl'));
  return (await database).url;
};
afterAll(async () => {
  if (database) await (await database).drop();
});

runStoreConformance({ name: 'postgres', create: storeFixtures(databaseUrl) });
