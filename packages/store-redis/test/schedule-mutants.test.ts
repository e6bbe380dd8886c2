// The stored-schedule scenarios can fail: each mutant of RedisStore below breaks one promise
// and the scenario that checks it fails against it; the real store passes them all (in
// ./schedule-conformance.test.ts).
import {
  type ScheduleStoreConformanceOptions,
  type StoreFixture,
  scheduleStoreScenarios,
} from '@fleetcron/conformance';
import {
  type ScheduleChange,
  ScheduleConflictError,
  type ScheduleDefinition,
  type ScheduleWrite,
  type StoredSchedule,
} from '@fleetcron/core';
import { redisUrl } from '@fleetcron/testkit/vitest';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisStore, type RedisStoreOptions, scheduleKeys } from '../src/index.js';
import { killScheduleSubscribers, mutantFixtures } from './fixture.js';

/** (sm1) Checks the version on the client, then writes whatever is stored: read-then-write. */
class ChecksVersionOnClient extends RedisStore {
  override async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    const current = await this.getSchedule(id);
    if (current?.version !== write.expectedVersion) {
      throw new ScheduleConflictError(id, write.expectedVersion, current?.version ?? null);
    }
    for (;;) {
      const now = (await this.getSchedule(id))!;
      try {
        return await super.replaceSchedule(id, definition, {
          ...write,
          expectedVersion: now.version,
        });
      } catch (error) {
        if (!(error instanceof ScheduleConflictError)) throw error;
      }
    }
  }
}

/** (sm2) Forwards `resync` but drops every `changed`: changes reach watchers only by chance. */
class DropsNotifications extends RedisStore {
  override watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return super.watchSchedules((change) => {
      if (change.kind === 'resync') listener(change);
    });
  }
}

/** (sm3) Forwards changes but drops `resync`: a message lost while disconnected stays lost. */
class NeverResyncs extends RedisStore {
  override watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return super.watchSchedules((change) => {
      if (change.kind !== 'resync') listener(change);
    });
  }
}

/** (sm4) Forgets tombstones: an id created again starts over at version 1. */
class ForgetsTombstones extends RedisStore {
  constructor(
    private readonly client: Redis,
    private readonly options: RedisStoreOptions,
  ) {
    super(client, options);
  }

  override async createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    if ((await this.getSchedule(id)) === null) {
      await this.client.hdel(scheduleKeys(this.options.prefix!).records, id);
    }
    return super.createSchedule(id, definition, write);
  }
}

const url = redisUrl();

async function dropPush(fixture: StoreFixture): Promise<void> {
  const { url: server, prefix } = fixture as StoreFixture & { url: string; prefix: string };
  await killScheduleSubscribers(server, prefix);
}

const options = (Store: typeof RedisStore): ScheduleStoreConformanceOptions => ({
  name: 'mutant',
  timeScale: 0.5,
  dropPush,
  create: mutantFixtures(url, Store),
});

describe('the stored-schedule scenarios fail mutants of RedisStore', () => {
  it('(sm1) version checked on the client: "two clients update … exactly one wins" fails', async () => {
    await expect(
      scheduleStoreScenarios.concurrentScheduleUpdates.run(options(ChecksVersionOnClient)),
    ).rejects.toThrow(/exactly one update wins/);
  }, 60_000);

  it('(sm2) changes not pushed: "a change while a fire of the old version runs" fails', async () => {
    await expect(
      scheduleStoreScenarios.changeWhileOldFireRuns.run(options(DropsNotifications)),
    ).rejects.toThrow(/timed out .*version 2/);
  }, 60_000);

  it('(sm3) no resync after a reconnect: "a change made while the push connection is dead" fails', async () => {
    await expect(
      scheduleStoreScenarios.lostScheduleNotification.run(options(NeverResyncs)),
    ).rejects.toThrow(/timed out/);
  }, 60_000);

  it('(control) the real store passes the lost-notification scenario on the same fixture', async () => {
    await scheduleStoreScenarios.lostScheduleNotification.run(options(RedisStore));
  }, 60_000);

  it('(sm4) tombstones forgotten: "a removed id keeps its version" fails', async () => {
    await expect(
      scheduleStoreScenarios.scheduleRoundTrip.run(options(ForgetsTombstones)),
    ).rejects.toThrow(/continues past its removed version/);
  }, 60_000);
});
