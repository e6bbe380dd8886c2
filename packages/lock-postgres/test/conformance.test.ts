// Wires this backend into the shared conformance suite; each registered scenario holds its own
// assertions (packages/conformance/src), so this file has no expect() of its own.
import { runFleetConformance, runLockConformance } from '@fleetcron/conformance';
import { isolatedPostgres, startPostgres } from '@fleetcron/testkit';
import { afterAll, inject } from 'vitest';
import { POSTGRES_LOCK_CAPABILITIES } from '../src/index.js';
import { lockFixtures } from './fixture.js';

// Functional scenarios: a database of this file's own on the shared server (global setup).
let database: ReturnType<typeof isolatedPostgres> | undefined;
const databaseUrl = async () => {
  database ??= isolatedPostgres(inject('fleetcronPostgresUrl'));
  return (await database).url;
};
afterAll(async () => {
  if (database) await (await database).drop();
});

const create = lockFixtures(databaseUrl);

runLockConformance({
  name: 'postgres',
  create,
  capabilities: POSTGRES_LOCK_CAPABILITIES,
  // Fault scenarios: a dedicated server the suite restarts and whose connections it drops.
  faults: async () => {
    const server = await startPostgres({ strategy: 'managed' });
    return {
      create: lockFixtures(async () => server.url),
      server,
      close: () => server.close(),
    };
  },
});

// Real schedulers, with the opt-in prepared statements (the lock suite above runs the default).
runFleetConformance({
  name: 'postgres (prepared statements)',
  create: lockFixtures(databaseUrl, { preparedStatements: true }),
});
