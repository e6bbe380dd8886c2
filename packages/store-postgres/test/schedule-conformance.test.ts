// PostgresStore's stored schedules through the shared suite (the scenarios hold the assertions):
// a database of this file's own, a schema per fixture; a lost notification is a LISTEN
// connection terminated by the server.
import { runScheduleStoreConformance, type StoreFixture } from '@fleetcron/conformance';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import type pg from 'pg';
import { scheduleChannel } from '../src/channel-listener.js';
import { storeFixtures } from './fixture.js';

runScheduleStoreConformance({
  name: 'postgres',
  create: storeFixtures(postgresDatabase()),
  async dropPush(fixture: StoreFixture) {
    const { schema, admin } = fixture as StoreFixture & { schema: string; admin: pg.Pool };
    const channel = scheduleChannel(schema, 'fleetcron');
    const { rowCount } = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND query = 'LISTEN "${channel}"'`,
    );
    if (rowCount !== 1)
      throw new Error(`expected one LISTEN connection to kill, found ${rowCount}`);
  },
});
