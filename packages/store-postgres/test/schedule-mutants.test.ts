// The lost-notification scenario proves it can fail: a PostgresStore whose watchers never hear
// the resync after LISTEN comes back (the mutant) fails it; the real store passes it (in
// ./schedule-conformance.test.ts).
import {
  type ScheduleStoreConformanceOptions,
  type StoreFixture,
  scheduleStoreScenarios,
} from '@fleetcron/conformance';
import type { ScheduleChange } from '@fleetcron/core';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { scheduleChannel } from '../src/channel-listener.js';
import { PostgresStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

/** (sc4) Forwards changes but drops `resync`: a notification lost while LISTEN was down stays lost. */
class NeverResyncs extends PostgresStore {
  override watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return super.watchSchedules((change) => {
      if (change.kind !== 'resync') listener(change);
    });
  }
}

const databaseUrl = postgresDatabase();

async function dropPush(fixture: StoreFixture): Promise<void> {
  const { schema, admin } = fixture as StoreFixture & { schema: string; admin: pg.Pool };
  await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE datname = current_database() AND query = 'LISTEN "${scheduleChannel(schema, 'fleetcron')}"'`,
  );
}

describe('the lost-notification scenario fails a store that never resyncs', () => {
  it('(sc4) no resync after LISTEN comes back: "a change made while the push connection is dead…" fails', async () => {
    const options: ScheduleStoreConformanceOptions = {
      name: 'mutant',
      timeScale: 0.5,
      dropPush,
      create: storeFixtures(databaseUrl, {}, NeverResyncs),
    };
    await expect(scheduleStoreScenarios.lostScheduleNotification.run(options)).rejects.toThrow(
      /timed out/,
    );
  }, 60_000);
});
