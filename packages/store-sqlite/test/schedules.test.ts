import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type FleetcronErrorCode,
  isFleetcronError,
  MAX_SCHEDULE_DATA_BYTES,
  type ScheduleChange,
  type ScheduleDefinition,
} from '@fleetcron/core';
import Database from 'libsql';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { MAX_CHANGES_PER_POLL } from '../src/schedule-change-poller.js';
import { changeMadeWhilePollFails, until } from './poll-outage.js';

// Stored schedules on SQLite beyond the shared contract (./schedule-conformance.test.ts): typed
// errors that store nothing, conflicts and unknown ids, paging edges, the change counter heard
// by another connection, and a poll that fails for real (the file's folder missing) and recovers
// with a resync.

const dirs: string[] = [];
const stores: SqliteStore[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcron-store-schedules-'));
  dirs.push(dir);
  return dir;
};
const open = (file: string, options: ConstructorParameters<typeof SqliteStore>[1] = {}) => {
  const store = new SqliteStore(file, options);
  stores.push(store);
  return store;
};
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const def = (data: ScheduleDefinition['data'] = null, handler = 'report'): ScheduleDefinition => ({
  handler,
  trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' },
  data,
  enabled: true,
  options: { leaseMs: 10_000, note: 'nightly' },
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as { code?: string; field?: string; actualVersion?: number | null },
  );

describe('SqliteStore stored schedules', () => {
  it('round-trips JSON at the 64 KiB bound, stamps the host clock and who, keeps a tombstone', async () => {
    const store = open(join(newDir(), 's.db'));
    const filler = 'x'.repeat(MAX_SCHEDULE_DATA_BYTES - 80);
    const data = { nul: 'a\u0000b', emoji: '🚀', nested: [1, { x: null }], filler };
    expect(Buffer.byteLength(JSON.stringify(data))).toBeGreaterThan(MAX_SCHEDULE_DATA_BYTES - 100);
    const before = Date.now();
    const s = await store.createSchedule('acme/daily', def(data), { by: 'alice' });
    const after = Date.now();
    expect(s).toMatchObject({ id: 'acme/daily', version: 1, data, createdBy: 'alice' });
    expect(s.createdAt).toBeGreaterThanOrEqual(before);
    expect(s.createdAt).toBeLessThanOrEqual(after);
    expect(s.updatedAt).toBe(s.createdAt);
    expect(await store.getSchedule('acme/daily')).toEqual(s);
    const v2 = await store.replaceSchedule(
      'acme/daily',
      { ...def('v2'), enabled: false },
      { by: 'bob', expectedVersion: 1 },
    );
    expect(v2).toMatchObject({
      version: 2,
      enabled: false,
      createdBy: 'alice',
      createdAt: s.createdAt,
      updatedBy: 'bob',
    });
    const removed = await store.removeSchedule('acme/daily', {
      by: 'carol',
      expectedVersion: null,
    });
    expect(removed, 'remove answers the schedule as it was').toEqual(v2);
    expect(await store.getSchedule('acme/daily')).toBeNull();
    const again = await store.createSchedule('acme/daily', def(), { by: 'dave' });
    expect(again).toMatchObject({ version: 4, createdBy: 'dave', updatedBy: 'dave' });
  });

  it('conflicts and unknown ids: typed errors, nothing written', async () => {
    const store = open(join(newDir(), 's.db'));
    await store.createSchedule('a', def(1), { by: 'x' });
    await store.replaceSchedule('a', def(2), { by: 'x', expectedVersion: 1 });
    expect(
      await failure(store.replaceSchedule('a', def(3), { by: 'y', expectedVersion: 1 })),
    ).toMatchObject({ code: 'SCHEDULE_CONFLICT', field: 'expectedVersion', actualVersion: 2 });
    expect(await failure(store.removeSchedule('a', { by: 'y', expectedVersion: 1 }))).toMatchObject(
      { code: 'SCHEDULE_CONFLICT', actualVersion: 2 },
    );
    expect(await store.getSchedule('a'), 'the refused writes changed nothing').toMatchObject({
      version: 2,
      data: 2,
      updatedBy: 'x',
    });
    expect(await failure(store.createSchedule('a', def(), { by: 'y' }))).toMatchObject({
      code: 'DUPLICATE_SCHEDULE',
      field: 'id',
    });
    await store.removeSchedule('a', { by: 'x', expectedVersion: 2 });
    expect(
      await failure(store.replaceSchedule('a', def(), { by: 'y', expectedVersion: 3 })),
    ).toMatchObject({ code: 'SCHEDULE_CONFLICT', actualVersion: null });
    expect(await failure(store.removeSchedule('a', { by: 'y', expectedVersion: 3 }))).toMatchObject(
      { code: 'SCHEDULE_CONFLICT', actualVersion: null },
    );
    expect(
      await failure(store.removeSchedule('a', { by: 'y', expectedVersion: null })),
    ).toMatchObject({ code: 'UNKNOWN_SCHEDULE', field: 'id' });
    for (const write of [
      store.replaceSchedule('never', def(), { by: 'y', expectedVersion: 1 }),
      store.removeSchedule('never', { by: 'y', expectedVersion: null }),
    ]) {
      expect(await failure(write)).toMatchObject({ code: 'UNKNOWN_SCHEDULE' });
    }
  });

  it('bad input is a typed error naming the field, and stores nothing', async () => {
    const store = open(join(newDir(), 's.db'));
    const cases: [Promise<unknown>, FleetcronErrorCode, string][] = [
      [
        store.createSchedule(
          'bad',
          { ...def(), trigger: { kind: 'cron', expression: '61 * * * *', tz: 'UTC' } },
          { by: 'x' },
        ),
        'INVALID_CRON',
        'trigger.expression',
      ],
      [store.createSchedule('bad', def(), { by: ' ' }), 'INVALID_OPTION', 'by'],
      [store.createSchedule('-bad', def(), { by: 'x' }), 'INVALID_OPTION', 'id'],
      [
        store.createSchedule('bad', def('y'.repeat(MAX_SCHEDULE_DATA_BYTES)), { by: 'x' }),
        'INVALID_OPTION',
        'data',
      ],
      [
        store.replaceSchedule('bad', def(), { by: 'x', expectedVersion: 0 }),
        'INVALID_OPTION',
        'expectedVersion',
      ],
      [store.listSchedules({ limit: 0 }), 'INVALID_OPTION', 'limit'],
      [store.listSchedules({ limit: 1001 }), 'INVALID_OPTION', 'limit'],
      [store.listSchedules({ cursor: 'not-a-cursor' }), 'INVALID_OPTION', 'cursor'],
      [store.listSchedules({ handler: '' }), 'INVALID_OPTION', 'handler'],
    ];
    for (const [promise, code, field] of cases) {
      const error = await failure(promise);
      expect(isFleetcronError(error, code), `${field}: ${String(error)}`).toBe(true);
      expect(error?.field).toBe(field);
    }
    expect((await store.listSchedules()).schedules, 'nothing stored').toEqual([]);
    const option = (() => {
      try {
        new SqliteStore(join(newDir(), 's.db'), { schedulePollMs: 0 });
      } catch (error) {
        return error as { code: string; field: string };
      }
    })();
    expect(option).toMatchObject({ code: 'INVALID_OPTION', field: 'schedulePollMs' });
  });

  it('pages by id (byte order), skips removed ones, filters by handler; an exact last page has no cursor', async () => {
    const store = open(join(newDir(), 's.db'));
    const ids = ['b1', 'B2', 'a3', 'A4', 'c5', 'a6', '07'];
    for (const [i, id] of ids.entries()) {
      await store.createSchedule(id, def(i, i % 2 === 0 ? 'even' : 'odd'), { by: 'x' });
    }
    await store.removeSchedule('a3', { by: 'x', expectedVersion: 1 });
    const all = async (query: { handler?: string; limit: number }) => {
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const page = await store.listSchedules({ ...query, cursor });
        pages.push(page.schedules.map((s) => s.id));
        cursor = page.nextCursor;
      } while (cursor);
      return pages;
    };
    expect(await all({ limit: 2 })).toEqual([
      ['07', 'A4'],
      ['B2', 'a6'],
      ['b1', 'c5'],
    ]);
    expect(await all({ limit: 6 }), 'exactly one full page').toEqual([
      ['07', 'A4', 'B2', 'a6', 'b1', 'c5'],
    ]);
    expect(await all({ handler: 'even', limit: 1 })).toEqual([['07'], ['b1'], ['c5']]);
    expect(await all({ handler: 'nobody', limit: 5 })).toEqual([[]]);
  });

  it('a file made before schedules gains the table on open; your Database works inline', async () => {
    const file = join(newDir(), 'old.db');
    await open(file).getJobState('made before schedules');
    const db = new Database(file);
    db.exec('DROP TABLE fleetcron_schedules');
    const inline = new SqliteStore(db);
    await inline.createSchedule('old', def(), { by: 'x' });
    expect((await open(file).getSchedule('old'))?.version).toBe(1);
    await inline.close();
    db.close();
  });

  it('another connection hears each change by id, in order; unsubscribing stops the poll', async () => {
    const file = join(newDir(), 's.db');
    const watching = open(file, { schedulePollMs: 20 });
    const writer = open(file);
    const heard: ScheduleChange[] = [];
    const unsubscribe = watching.watchSchedules((c) => heard.push(c));
    await until(() => heard.length > 0, 10_000, 'the first read');
    expect(heard, 'the first read is told as a resync').toEqual([{ kind: 'resync' }]);
    const writes: [string, () => Promise<unknown>][] = [
      ['one', () => writer.createSchedule('one', def(), { by: 'x' })],
      ['two', () => writer.createSchedule('two', def(), { by: 'x' })],
      ['one', () => writer.replaceSchedule('one', def(1), { by: 'x', expectedVersion: 1 })],
      ['two', () => writer.removeSchedule('two', { by: 'x', expectedVersion: 1 })],
    ];
    for (const [i, [id, write]] of writes.entries()) {
      await write();
      await until(() => heard.length === i + 2, 10_000, `the change of ${id}`);
      expect(heard.at(-1)).toEqual({ kind: 'changed', id });
    }
    // several changes between two polls come as one per id, in the order of their last change
    await writer.replaceSchedule('one', def(2), { by: 'x', expectedVersion: 2 });
    await writer.createSchedule('three', def(), { by: 'x' });
    await writer.replaceSchedule('one', def(3), { by: 'x', expectedVersion: 3 });
    const batch = () => heard.slice(5).map((c) => (c.kind === 'changed' ? c.id : c.kind));
    await until(() => batch().join().endsWith('three,one'), 10_000, 'the last change of one');
    expect(['three,one', 'one,three,one']).toContain(batch().join());
    const told = heard.length;
    unsubscribe();
    await writer.createSchedule('four', def(), { by: 'x' });
    const later: ScheduleChange[] = [];
    watching.watchSchedules((c) => later.push(c));
    await until(() => later.length > 0, 10_000, 'a poll after the write (a new first read)');
    expect(later).toEqual([{ kind: 'resync' }]);
    expect(heard, 'nothing heard after unsubscribing').toHaveLength(told);
  });

  it(`${MAX_CHANGES_PER_POLL} or more changes between two polls are told as one resync`, async () => {
    const file = join(newDir(), 's.db');
    const watching = open(file, { schedulePollMs: 50 });
    const heard: ScheduleChange[] = [];
    watching.watchSchedules((c) => heard.push(c));
    await until(() => heard.length > 0, 10_000, 'the first read');
    // one transaction of another connection: the next poll sees all of it at once
    const db = new Database(file);
    const insert = db.prepare(
      `INSERT INTO fleetcron_schedules (id, handler, trigger, data, enabled, options, version,
         created_at, created_by, updated_at, updated_by, change_seq)
       VALUES (?, 'report', '{"kind":"every","ms":60000,"anchor":0}', 'null', 1, '{}', 1,
         0, 'x', 0, 'x', ?)`,
    );
    db.transaction(() => {
      for (let i = 1; i <= MAX_CHANGES_PER_POLL; i++) insert.run(`s${i}`, i);
    })();
    db.close();
    await until(() => heard.length > 1, 10_000, 'the poll after the flood');
    expect(heard).toEqual([{ kind: 'resync' }, { kind: 'resync' }]);
    await open(file).createSchedule('after', def(), { by: 'x' });
    await until(() => heard.length > 2, 10_000, 'the change after the flood');
    expect(heard.at(-1)).toEqual({ kind: 'changed', id: 'after' });
    expect((await watching.listSchedules({ limit: 1000 })).nextCursor).not.toBeNull();
  });

  it('a poll that fails (the folder is missing) logs a warning, and a resync follows its recovery', async () => {
    await changeMadeWhilePollFails(SqliteStore, newDir(), stores);
  });

  it('every change of a writer process SIGKILLed mid-stream is heard by another process', async () => {
    const file = join(newDir(), 's.db');
    const watching = open(file, { schedulePollMs: 20 });
    const heard: ScheduleChange[] = [];
    watching.watchSchedules((c) => heard.push(c));
    await until(() => heard.length > 0, 10_000, 'the first read');
    const writer = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=source',
        fileURLToPath(new URL('./schedule-writer-process.ts', import.meta.url)),
        file,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => writer.once('exit', resolve));
    let printed = 0;
    writer.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString().split('\n').length - 1;
    });
    try {
      await until(() => printed >= 30, 30_000, 'the writer process to write 30 schedules');
    } finally {
      writer.kill('SIGKILL');
      await exited;
    }
    const stored: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await watching.listSchedules({ limit: 1000, cursor });
      stored.push(...page.schedules.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(stored.length, 'every answered write is stored').toBeGreaterThanOrEqual(printed);
    const told = () => new Set(heard.flatMap((c) => (c.kind === 'changed' ? [c.id] : [])));
    await until(() => stored.every((id) => told().has(id)), 10_000, 'every stored change told');
    expect([...told()].sort()).toEqual([...stored].sort());
    expect(
      heard.filter((c) => c.kind === 'resync'),
      'only the first read resynced',
    ).toHaveLength(1);
  }, 60_000);
});
