import { describe, expect, it } from 'vitest';
import {
  FakeClock,
  isFleetcronError,
  MemoryStore,
  type ScheduleChange,
  type ScheduleDefinition,
} from '../../src/index.js';

const def = (handler = 'h', data: ScheduleDefinition['data'] = null): ScheduleDefinition => ({
  handler,
  trigger: { kind: 'every', ms: 60_000, anchor: 0 },
  data,
  enabled: true,
  options: {},
});

function setup() {
  const clock = new FakeClock();
  return { clock, store: new MemoryStore({ clock }) };
}

describe('MemoryStore: the ScheduleStore contract', () => {
  it('create stamps version 1 and who/when; a second create of the id is DUPLICATE_SCHEDULE', async () => {
    const { clock, store } = setup();
    const s = await store.createSchedule('a', def(), { by: 'alice' });
    expect(s).toMatchObject({ id: 'a', version: 1, createdAt: clock.now(), createdBy: 'alice' });
    expect(s.updatedAt).toBe(clock.now());
    const again = await store.createSchedule('a', def(), { by: 'bob' }).catch((e) => e);
    expect(isFleetcronError(again, 'DUPLICATE_SCHEDULE')).toBe(true);
    expect(await store.getSchedule('a')).toEqual(s);
  });

  it('replace at the expected version bumps it; a stale version is SCHEDULE_CONFLICT and writes nothing', async () => {
    const { clock, store } = setup();
    await store.createSchedule('a', def(), { by: 'alice' });
    await clock.advance(5_000);
    const v2 = await store.replaceSchedule('a', def('h', { n: 2 }), {
      by: 'bob',
      expectedVersion: 1,
    });
    expect(v2).toMatchObject({ version: 2, data: { n: 2 }, updatedBy: 'bob', createdBy: 'alice' });
    expect(v2.updatedAt - v2.createdAt).toBe(5_000);
    const stale = await store
      .replaceSchedule('a', def('h', { n: 3 }), { by: 'carol', expectedVersion: 1 })
      .catch((e) => e);
    expect(stale).toMatchObject({
      code: 'SCHEDULE_CONFLICT',
      expectedVersion: 1,
      actualVersion: 2,
    });
    expect(await store.getSchedule('a')).toEqual(v2);
  });

  it('of two writers from the same version exactly one wins', async () => {
    const { store } = setup();
    await store.createSchedule('a', def(), { by: 'x' });
    const results = await Promise.allSettled(
      ['p', 'q'].map((by) => store.replaceSchedule('a', def('h', by), { by, expectedVersion: 1 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(isFleetcronError(lost.reason, 'SCHEDULE_CONFLICT')).toBe(true);
    expect((await store.getSchedule('a'))?.version).toBe(2);
  });

  it('remove leaves a tombstone: get is null, a stale write conflicts, a new create continues the version', async () => {
    const { store } = setup();
    await store.createSchedule('a', def(), { by: 'x' });
    const removed = await store.removeSchedule('a', { by: 'y', expectedVersion: 1 });
    expect(removed.version).toBe(1);
    expect(await store.getSchedule('a')).toBeNull();
    expect((await store.listSchedules()).schedules).toEqual([]);
    const stale = await store
      .replaceSchedule('a', def(), { by: 'z', expectedVersion: 1 })
      .catch((e) => e);
    expect(stale).toMatchObject({ code: 'SCHEDULE_CONFLICT', actualVersion: null });
    const unknown = await store
      .removeSchedule('a', { by: 'z', expectedVersion: null })
      .catch((e) => e);
    expect(isFleetcronError(unknown, 'UNKNOWN_SCHEDULE')).toBe(true);
    const again = await store.createSchedule('a', def(), { by: 'w' });
    expect(again.version).toBe(3); // 1 created, 2 removed, 3 created again
  });

  it('an id never created is UNKNOWN_SCHEDULE for replace and remove', async () => {
    const { store } = setup();
    for (const op of [
      store.replaceSchedule('nope', def(), { by: 'x', expectedVersion: 1 }),
      store.removeSchedule('nope', { by: 'x', expectedVersion: 1 }),
    ]) {
      expect(await op.catch((e) => e)).toMatchObject({ code: 'UNKNOWN_SCHEDULE', field: 'id' });
    }
  });

  it('lists by id with cursor paging and a handler filter', async () => {
    const { store } = setup();
    const ids = Array.from({ length: 25 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    for (const [i, id] of [...ids].reverse().entries()) {
      await store.createSchedule(id, def(i % 2 === 0 ? 'even' : 'odd'), { by: 'x' });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await store.listSchedules({ limit: 10, cursor });
      seen.push(...page.schedules.map((s) => s.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
    const even = await store.listSchedules({ handler: 'even', limit: 1000 });
    expect(even.schedules.every((s) => s.handler === 'even')).toBe(true);
    expect(even.schedules).toHaveLength(13);
    expect(even.nextCursor).toBeNull();
    const bad = await store.listSchedules({ cursor: 'garbage' }).catch((e) => e);
    expect(bad).toMatchObject({ code: 'INVALID_OPTION', field: 'cursor' });
  });

  it('watchers hear every change by id, until they unsubscribe', async () => {
    const { store } = setup();
    const heard: ScheduleChange[] = [];
    const stop = store.watchSchedules((c) => heard.push(c));
    await store.createSchedule('a', def(), { by: 'x' });
    await store.replaceSchedule('a', def('h', 1), { by: 'x', expectedVersion: 1 });
    await store.removeSchedule('a', { by: 'x', expectedVersion: 2 });
    await Promise.resolve();
    expect(heard).toEqual(Array(3).fill({ kind: 'changed', id: 'a' }));
    stop();
    await store.createSchedule('b', def(), { by: 'x' });
    await Promise.resolve();
    expect(heard).toHaveLength(3);
  });

  it('a bad definition passed straight to the store stores nothing', async () => {
    const { store } = setup();
    const bad = { ...def(), trigger: { kind: 'cron', expression: 'nope', tz: 'UTC' } } as const;
    expect(await store.createSchedule('a', bad, { by: 'x' }).catch((e) => e)).toMatchObject({
      code: 'INVALID_CRON',
      field: 'trigger.expression',
    });
    expect(await store.getSchedule('a')).toBeNull();
  });
});
