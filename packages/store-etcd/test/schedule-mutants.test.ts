// The schedule scenarios the etcd store passes (./schedule-conformance.test.ts) can fail: each
// mutant below is a believable bug of an etcd schedule store, and the scenario it breaks
// rejects it. The mutant that gives its watch up when the connection drops also proves that
// `cutSchedulePush` cuts the watch for real.
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
import { etcdEndpoints } from '@fleetcron/testkit/vitest';
import type { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { EtcdStore, type EtcdStoreOptions, StoreKeys } from '../src/index.js';
import { encodeScheduleRecord } from '../src/schedule-record.js';
import { cutSchedulePush, linkedStoreFixtures } from './fixture.js';

/** (se1) Checks the version on what it read, then puts without a compare: a lost update. */
class UncheckedWrites extends EtcdStore {
  constructor(
    private readonly raw: Etcd3,
    private readonly opts: EtcdStoreOptions,
  ) {
    super(raw, opts);
  }

  override async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    const current = await this.getSchedule(id);
    if (!current || current.version !== write.expectedVersion) {
      throw new ScheduleConflictError(id, write.expectedVersion, current?.version ?? null);
    }
    const next = {
      ...current,
      ...definition,
      version: current.version + 1,
      updatedAt: Date.now(),
      updatedBy: write.by,
    };
    const key = new StoreKeys(this.opts.prefix!).schedule(id);
    await this.raw
      .put(key)
      .value(encodeScheduleRecord({ ...next, removed: false }))
      .exec();
    return next;
  }
}

/** (se2) Drops every notification: watchers hear nothing (neither `changed` nor `resync`). */
class SilentWatch extends EtcdStore {
  override watchSchedules(_listener: (change: ScheduleChange) => void): () => void {
    return () => {};
  }
}

/** (se3) Forwards changes until its connection first drops, then never again (no re-watch). */
class GivesUpOnDrop extends EtcdStore {
  constructor(
    private readonly raw: Etcd3,
    private readonly opts: EtcdStoreOptions,
  ) {
    super(raw, opts);
  }

  override watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    const prefix = new StoreKeys(this.opts.prefix!).allSchedules();
    const watcher = this.raw.watch().prefix(prefix).watcher();
    watcher.on('put', (kv) =>
      listener({ kind: 'changed', id: kv.key.toString().slice(prefix.length) }),
    );
    watcher.on('error', () => {});
    watcher.once('disconnected', () => {
      void watcher.cancel().catch(() => undefined);
    });
    return () => {
      void watcher.cancel().catch(() => undefined);
    };
  }
}

const endpoints = etcdEndpoints();

function mutant(
  S: new (client: Etcd3, options: EtcdStoreOptions) => EtcdStore,
): ScheduleStoreConformanceOptions {
  return {
    name: `mutant ${S.name}`,
    timeScale: 0.5,
    dropPush: (fixture: StoreFixture) => cutSchedulePush(fixture),
    create: linkedStoreFixtures(endpoints, {}, S),
  };
}

describe('the etcd schedule scenarios fail believable bugs', () => {
  it('(se1) a version checked on the read, put without a compare: "exactly one wins" fails', async () => {
    await expect(
      scheduleStoreScenarios.concurrentScheduleUpdates.run(mutant(UncheckedWrites)),
    ).rejects.toThrow(/exactly one update wins/);
  }, 60_000);

  it('(se2) notifications dropped: "a change made while the push connection is dead…" fails', async () => {
    await expect(
      scheduleStoreScenarios.lostScheduleNotification.run(mutant(SilentWatch)),
    ).rejects.toThrow(/timed out.*the change before the fault to be pushed/);
  }, 60_000);

  it('(se3) a watch not re-established after its connection is cut: the lost-notification scenario fails', async () => {
    await expect(
      scheduleStoreScenarios.lostScheduleNotification.run(mutant(GivesUpOnDrop)),
    ).rejects.toThrow(/timed out.*resync/);
  }, 60_000);
});
