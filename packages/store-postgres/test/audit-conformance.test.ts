// PostgresStore through the shared audit-log suite (the scenarios hold the assertions): a
// database of this file's own, a schema per fixture, stores made with a 40-entry bound.
import { runAuditConformance } from '@fleetcron/conformance';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { storeFixtures } from './fixture.js';

runAuditConformance({
  name: 'postgres',
  create: storeFixtures(postgresDatabase(), { audit: { maxEntries: 40 } }),
  maxEntries: 40,
});
