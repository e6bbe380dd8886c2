// RedisStore's stored schedules through the shared suite (the scenarios hold the assertions):
// a prefix per fixture on the shared server; a lost notification is the fixture's schedule
// subscriber connection killed by the server (CLIENT KILL ID, found by its connection name).
import { runScheduleStoreConformance, type StoreFixture } from '@fleetcron/conformance';
import { redisUrl } from '@fleetcron/testkit/vitest';
import { killScheduleSubscribers, storeFixtures } from './fixture.js';

runScheduleStoreConformance({
  name: 'redis',
  create: storeFixtures(redisUrl()),
  async dropPush(fixture: StoreFixture) {
    const { url, prefix } = fixture as StoreFixture & { url: string; prefix: string };
    const killed = await killScheduleSubscribers(url, prefix);
    if (killed !== 1) throw new Error(`expected one schedule subscriber to kill, found ${killed}`);
  },
});
