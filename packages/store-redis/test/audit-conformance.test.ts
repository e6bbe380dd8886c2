// RedisStore's audit log through the shared audit suite (the scenarios hold the assertions):
// every entry appended inside its mutation's Lua script, bounded to `audit.maxEntries`.
import { runAuditConformance } from '@fleetcron/conformance';
import { redisUrl } from '@fleetcron/testkit/vitest';
import { storeFixtures } from './fixture.js';

runAuditConformance({
  name: 'redis',
  create: storeFixtures(redisUrl(), { audit: { maxEntries: 40 } }),
  maxEntries: 40,
});
