import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFleetcronError } from '@fleetcron/core';
import { TERMINAL_STATUSES } from '@fleetcron/core/backend';
import Database from 'libsql';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore, STORE_STATUSES } from '../src/index.js';

const dirs: string[] = [];
const fileOf = () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-store-sqlite-'));
  dirs.push(dir);
  return join(dir, 'store.db');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const run = (id: string, status: 'running' | 'succeeded') => ({
  id,
  job: 'j',
  fireAt: 1000,
  status,
  attempt: 1,
  instanceId: 'i',
  token: 1,
  startedAt: 1000,
  finishedAt: status === 'running' ? null : 1500,
  error: null,
});

describe('SqliteStore', () => {
  it('its status list is core’s RunStatus list (the worker cannot import core)', () => {
    expect([...STORE_STATUSES].sort()).toEqual(['running', ...TERMINAL_STATUSES].sort());
  });

  it('works on your Database (inline) and never closes it', async () => {
    const db = new Database(fileOf());
    const store = new SqliteStore(db);
    await store.record(run('a', 'succeeded'));
    expect((await store.getJobState('j')).lastStatus).toBe('succeeded');
    await store.recordMany([run('c', 'running'), run('c', 'succeeded'), run('c', 'running')]);
    expect((await store.history('j')).executions.map((e) => [e.id, e.status])).toEqual([
      ['c', 'succeeded'],
      ['a', 'succeeded'],
    ]);
    await store.close();
    expect(db.open).toBe(true);
    expect(db.prepare('PRAGMA journal_mode').all()).toEqual([{ journal_mode: 'wal' }]);
    db.close();
  });

  it('a file path and your Database see the same rows', async () => {
    const file = fileOf();
    const owned = new SqliteStore(file);
    await owned.record(run('b', 'running'));
    const db = new Database(file);
    const inline = new SqliteStore(db);
    expect((await inline.history('j')).executions.map((e) => e.id)).toEqual(['b']);
    await owned.close();
    db.close();
  });

  it('bad input fails with a typed error naming the field', () => {
    for (const [source, options, field] of [
      [':memory:', {}, 'database'],
      [42, {}, 'database'],
      [fileOf(), { busyTimeoutMs: -1 }, 'busyTimeoutMs'],
      [fileOf(), { maxErrorLength: 0 }, 'maxErrorLength'],
    ] as const) {
      let caught: unknown;
      try {
        new SqliteStore(source as string, options);
      } catch (error) {
        caught = error;
      }
      expect(isFleetcronError(caught, 'INVALID_OPTION'), String(caught)).toBe(true);
      expect((caught as { field: string }).field).toBe(field);
    }
  });

  it('recordMany is one transaction: a row SQLite refuses rolls the whole batch back', async () => {
    const store = new SqliteStore(fileOf());
    const refused = await store
      .recordMany([
        run('kept-out', 'succeeded'),
        { ...run('bad', 'running'), status: 'nope' as 'running' },
      ])
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isFleetcronError(refused, 'BACKEND_UNAVAILABLE'), String(refused)).toBe(true);
    expect((await store.history('j')).executions, 'nothing of the batch written').toEqual([]);
    expect((await store.getJobState('j')).lastStatus).toBeNull();
    await store.close();
  });

  it('an unreadable path rejects with BackendUnavailableError, never crashes', async () => {
    const store = new SqliteStore('/proc/no/such/dir/fleetcron.db');
    const error = await store.getJobState('j').then(
      () => null,
      (e: unknown) => e,
    );
    expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
    const batch = await store.recordMany([run('a', 'running')]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isFleetcronError(batch, 'BACKEND_UNAVAILABLE'), String(batch)).toBe(true);
    await store.close();
  });
});
