// SqliteStore through the shared audit-log suite (the scenarios hold the assertions): stores
// made with a 40-entry bound, so the bound scenario prunes for real.
import { runAuditConformance } from '@fleetcron/conformance';
import { storeFixtures } from './fixture.js';

runAuditConformance({
  name: 'sqlite',
  create: storeFixtures({ audit: { maxEntries: 40 } }),
  maxEntries: 40,
});
