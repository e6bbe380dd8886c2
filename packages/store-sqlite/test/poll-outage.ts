import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger, ScheduleChange } from '@fleetcron/core';
import { expect } from 'vitest';
import type { SqliteStore, SqliteStoreOptions } from '../src/index.js';

/** Polls `attempt` every 20 ms until it returns true; fails after `timeoutMs` naming `what`. */
export async function until(
  attempt: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await attempt())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A real poll outage: the watcher's file is in a folder that does not exist yet, so every poll
 * fails to open it (`SQLITE_CANTOPEN`, logged once). A schedule is created in another folder,
 * which is then renamed into place: the watcher's next poll succeeds and must tell a `resync`
 * (the only way it learns of the change made while it could not read). Stores it opens are
 * pushed to `opened` (closed by the caller).
 */
export async function changeMadeWhilePollFails(
  Store: new (file: string, options?: SqliteStoreOptions) => SqliteStore,
  dir: string,
  opened: SqliteStore[],
): Promise<void> {
  const warnings: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (message) => void warnings.push(message),
    error() {},
  };
  const watching = new Store(join(dir, 'live', 's.db'), { schedulePollMs: 20, logger });
  opened.push(watching);
  const heard: ScheduleChange[] = [];
  watching.watchSchedules((c) => heard.push(c));
  await until(() => warnings.length > 0, 10_000, 'a failed poll');
  expect(warnings).toEqual([
    'fleetcron: polling schedule changes failed; resync when it works again',
  ]);
  expect(heard, 'nothing told while it fails').toEqual([]);
  mkdirSync(join(dir, 'staged'));
  const writer = new Store(join(dir, 'staged', 's.db'));
  await writer.createSchedule(
    'made-meanwhile',
    {
      handler: 'report',
      trigger: { kind: 'every', ms: 60_000, anchor: 0 },
      data: null,
      enabled: true,
      options: {},
    },
    { by: 'x' },
  );
  await writer.close();
  renameSync(join(dir, 'staged'), join(dir, 'live'));
  await until(() => heard.length > 0, 5_000, 'a resync after the poll works again');
  expect(heard).toEqual([{ kind: 'resync' }]);
  expect((await watching.getSchedule('made-meanwhile'))?.version).toBe(1);
  expect(warnings, 'one warning per outage').toHaveLength(1);
}
