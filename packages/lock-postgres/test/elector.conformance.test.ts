// Wires the PostgreSQL elector into the shared elector suite; each registered scenario holds its
// own assertions (packages/conformance/src/elector), so this file has no expect() of its own.
import { runElectorConformance } from '@fleetcron/conformance';
import { isolatedPostgres, startPostgres } from '@fleetcron/testkit';
import { afterAll, inject } from 'vitest';
import { POSTGRES_ELECTOR_CAPABILITIES } from '../src/index.js';
import { electorFixtures } from './elector-fixture.js';

let database: ReturnType<typeof isolatedPostgres> | undefined;
const databaseUrl = async () => {
  database ??= isolatedPostgres(inject('fleetcronPostgresUrl'));
  return (await database).url;
};
afterAll(async () => {
  if (database) await (await database).drop();
});

runElectorConformance({
  name: 'postgres',
  create: electorFixtures(databaseUrl),
  capabilities: { ...POSTGRES_ELECTOR_CAPABILITIES },
  faults: async () => {
    const server = await startPostgres({ strategy: 'managed' });
    return {
      create: electorFixtures(async () => server.url),
      server,
      close: () => server.close(),
    };
  },
});
