// The schedule scenarios prove they can fail on this store: each mutant is a SqliteStore with one
// guarantee taken away, and the scenario that guards it must reject. The real store passes them
// all (./schedule-conformance.test.ts, ./schedules.test.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ScheduleStoreConformanceOptions,
  scheduleStoreScenarios,
} from '@fleetcron/conformance';
import {
  isFleetcronError,
  type ScheduleChange,
  type ScheduleDefinition,
  type ScheduleWrite,
  type StoredSchedule,
} from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { SqliteStore, type SqliteStoreOptions } from '../src/index.js';
import { storeFixtures } from './fixture.js';
import { changeMadeWhilePollFails } from './poll-outage.js';

/**
 * (sm1) Last writer wins: reads the version and writes with it (read-then-write across two
 * requests, retried on a conflict), so a stale writer overwrites instead of failing.
 */
class BlindOverwrite extends SqliteStore {
  override async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    for (;;) {
      const current = await this.getSchedule(id);
      const expectedVersion = current?.version ?? write.expectedVersion;
      try {
        return await super.replaceSchedule(id, definition, { ...write, expectedVersion });
      } catch (error) {
        if (!isFleetcronError(error, 'SCHEDULE_CONFLICT')) throw error;
      }
    }
  }
}

/** (sm2) Drops every `changed` notification: watchers hear only `resync`. */
class NeverTells extends SqliteStore {
  override watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return super.watchSchedules((change) => {
      if (change.kind === 'resync') listener(change);
    });
  }
}

/** (sm3) Drops `resync`: what changed while polls failed is never told. */
class NeverResyncs extends SqliteStore {
  override watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return super.watchSchedules((change) => {
      if (change.kind !== 'resync') listener(change);
    });
  }
}

const mutant = (
  Store: new (file: string, options: SqliteStoreOptions) => SqliteStore,
): ScheduleStoreConformanceOptions => ({
  name: 'mutant',
  timeScale: 0.5,
  dropPush: { unsupported: 'SQLite has no push connection' },
  create: storeFixtures({}, Store),
});

describe('the schedule scenarios fail a SqliteStore that breaks them', () => {
  it('(sm1) a stale write overwrites: "two clients update … exactly one wins" fails', async () => {
    await expect(
      scheduleStoreScenarios.concurrentScheduleUpdates.run(mutant(BlindOverwrite)),
    ).rejects.toThrow(/exactly one update wins/);
  }, 60_000);

  it('(sm2) changes never told: "a change while a fire of the old version runs…" fails', async () => {
    await expect(
      scheduleStoreScenarios.changeWhileOldFireRuns.run(mutant(NeverTells)),
    ).rejects.toThrow(/timed out/);
  }, 60_000);

  it('(sm3) no resync after a failed poll: the poll-outage test (./schedules.test.ts) fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcron-store-mutant-'));
    const opened: SqliteStore[] = [];
    try {
      await expect(changeMadeWhilePollFails(NeverResyncs, dir, opened)).rejects.toThrow(
        /timed out .* a resync after the poll works again/,
      );
    } finally {
      await Promise.all(opened.map((s) => s.close()));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
