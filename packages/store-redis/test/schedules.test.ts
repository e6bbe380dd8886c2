import {
  isFleetcronError,
  MAX_SCHEDULE_DATA_BYTES,
  MemoryLock,
  type ScheduleChange,
  type ScheduleDefinition,
  Scheduler,
  ScheduleServer,
} from '@fleetcron/core';
import { RedisScript } from '@fleetcron/redis-shared';
import { startRedis } from '@fleetcron/testkit';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { auditKeys, RedisStore, scheduleKeys } from '../src/index.js';
import { scheduleWatchConnectionName } from '../src/redis-schedules.js';
import { REMOVE_SCHEDULE, REPLACE_SCHEDULE } from '../src/schedule-scripts.js';
import { killScheduleSubscribers, newClient, sharedUrl, uniquePrefix } from './fixture.js';

// Stored schedules on Redis beyond the shared contract: what is stored and how, bad input that
// stores nothing, paging edges, a re-sent write, push and resync on a killed subscriber and
// across a server restart, and the subscriber connection given back.

const opened: Redis[] = [];
const stores: RedisStore[] = [];
afterAll(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const client of opened.splice(0)) client.disconnect();
});

function client(url = sharedUrl()): Redis {
  const c = newClient(url);
  opened.push(c);
  return c;
}

function store(prefix: string, url = sharedUrl()): RedisStore {
  const s = new RedisStore(client(url), { prefix });
  stores.push(s);
  return s;
}

const def = (data: ScheduleDefinition['data'] = null, handler = 'report'): ScheduleDefinition => ({
  handler,
  trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' },
  data,
  enabled: true,
  options: { leaseMs: 10_000, note: 'nightly' },
});

/** Polls `attempt` every 50 ms until it returns true; fails after `timeoutMs` naming `what`. */
async function until(attempt: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await attempt())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The schedule subscriber connections of `prefix` in `CLIENT LIST`. */
async function subscribers(prefix: string, url = sharedUrl()): Promise<number> {
  const name = scheduleWatchConnectionName(scheduleKeys(prefix).channel);
  const list = (await client(url).call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
  return list.split('\n').filter((line) => line.split(' ').includes(`name=${name}`)).length;
}

describe('RedisStore stored schedules', () => {
  it('round-trips any JSON exactly, stamps the Redis clock and who, keeps a tombstone', async () => {
    const prefix = uniquePrefix();
    const s = store(prefix);
    const data = {
      nul: 'a\u0000b',
      emoji: '🚀',
      newline: 'a\nb',
      big: Number.MAX_SAFE_INTEGER,
      small: 5e-324,
      float: 0.1,
      empty: { list: [], object: {} },
      nested: [1, { x: null, y: false }],
    };
    const before = Date.now();
    const created = await s.createSchedule('acme/daily', def(data), { by: 'alice\u0000 "x"\n' });
    expect(created).toMatchObject({
      id: 'acme/daily',
      version: 1,
      data,
      createdBy: 'alice\u0000 "x"\n',
    });
    expect(created.createdAt).toBeGreaterThanOrEqual(before - 5_000);
    expect(created.createdAt).toBeLessThanOrEqual(Date.now() + 5_000);
    expect(await store(prefix).getSchedule('acme/daily')).toEqual(created);
    const [entry] = (await s.listAudit({ job: 'schedule:acme/daily' })).entries;
    expect(entry, 'the audit entry keeps who exactly').toMatchObject({
      action: 'schedule.create',
      by: 'alice\u0000 "x"\n',
      version: 1,
    });
    const v2 = await s.replaceSchedule('acme/daily', def('v2', 'other'), {
      by: 'bob',
      expectedVersion: 1,
    });
    expect(v2).toMatchObject({
      version: 2,
      handler: 'other',
      data: 'v2',
      createdAt: created.createdAt,
      createdBy: created.createdBy,
      updatedBy: 'bob',
    });
    const removed = await s.removeSchedule('acme/daily', { by: 'carol', expectedVersion: null });
    expect(removed, 'remove resolves the schedule as it was').toEqual(v2);
    expect(await s.getSchedule('acme/daily')).toBeNull();
    const stale = await s
      .replaceSchedule('acme/daily', def(), { by: 'dave', expectedVersion: 2 })
      .catch((e) => e);
    expect(stale).toMatchObject({ code: 'SCHEDULE_CONFLICT', actualVersion: null });
    const gone = await s
      .removeSchedule('acme/daily', { by: 'dave', expectedVersion: null })
      .catch((e) => e);
    expect(isFleetcronError(gone, 'UNKNOWN_SCHEDULE'), String(gone)).toBe(true);
    const never = await s
      .replaceSchedule('never', def(), { by: 'x', expectedVersion: 1 })
      .catch((e) => e);
    expect(isFleetcronError(never, 'UNKNOWN_SCHEDULE'), String(never)).toBe(true);
    expect((await s.createSchedule('acme/daily', def(), { by: 'erin' })).version).toBe(4);
    // the layout the README documents: one record hash and two indexes, nothing else
    const keys = scheduleKeys(prefix);
    const raw = client();
    expect(await raw.keys(`{${prefix}}:*`)).toEqual(
      expect.arrayContaining([keys.records, keys.ids, keys.byHandler]),
    );
    expect(await raw.zrange(keys.byHandler, '0', '-1')).toEqual(['report acme/daily']);
    expect(await raw.zrange(keys.ids, '0', '-1')).toEqual(['acme/daily']);
  });

  it('bad input gets a typed error naming the field and stores nothing', async () => {
    const prefix = uniquePrefix();
    const s = store(prefix);
    const attempts: [string, () => Promise<unknown>][] = [
      ['id', () => s.createSchedule('', def(), { by: 'x' })],
      ['id', () => s.createSchedule('has space', def(), { by: 'x' })],
      ['handler', () => s.createSchedule('a', def(null, '1bad'), { by: 'x' })],
      [
        'trigger.expression',
        () =>
          s.createSchedule(
            'a',
            { ...def(), trigger: { kind: 'cron', expression: '61 * * * *', tz: 'UTC' } },
            { by: 'x' },
          ),
      ],
      ['data', () => s.createSchedule('a', def('x'.repeat(MAX_SCHEDULE_DATA_BYTES)), { by: 'x' })],
      ['by', () => s.createSchedule('a', def(), { by: ' ' })],
      ['expectedVersion', () => s.replaceSchedule('a', def(), { by: 'x', expectedVersion: 0 })],
      ['expectedVersion', () => s.removeSchedule('a', { by: 'x', expectedVersion: 1.5 })],
      ['limit', () => s.listSchedules({ limit: 1_001 })],
      ['limit', () => s.listSchedules({ limit: 0 })],
      ['handler', () => s.listSchedules({ handler: '' })],
      ['cursor', () => s.listSchedules({ cursor: 'not-a-cursor' })],
    ];
    for (const [field, attempt] of attempts) {
      const error = await attempt().catch((e) => e);
      expect(isFleetcronError(error), `${field}: ${String(error)}`).toBe(true);
      expect((error as { field?: string }).field, String(error)).toBe(field);
    }
    expect(await client().keys(`{${prefix}}:*`), 'nothing was stored').toEqual([]);
  });

  it('pages by id, filtered by handler, with handler names that prefix one another', async () => {
    const s = store(uniquePrefix());
    expect(await s.listSchedules(), 'an empty store').toEqual({ schedules: [], nextCursor: null });
    const handlers = ['a', 'a.b', 'ab', 'b'];
    for (let i = 0; i < 12; i++) {
      await s.createSchedule(`s${String(i).padStart(2, '0')}`, def(i, handlers[i % 4]), {
        by: 'x',
      });
    }
    await s.removeSchedule('s04', { by: 'x', expectedVersion: 1 });
    await s.replaceSchedule('s01', def('moved', 'a'), { by: 'x', expectedVersion: 1 });
    const walk = async (handler: string | null, limit: number) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await s.listSchedules({ handler, limit, cursor });
        expect(page.schedules.length, 'a page is never over the limit').toBeLessThanOrEqual(limit);
        ids.push(...page.schedules.map((x) => x.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      return { ids, pages };
    };
    expect(await walk('a', 2)).toEqual({ ids: ['s00', 's01', 's08'], pages: 2 });
    expect(await walk('a.b', 1)).toEqual({ ids: ['s05', 's09'], pages: 2 });
    expect(await walk('ab', 3)).toEqual({ ids: ['s02', 's06', 's10'], pages: 1 });
    expect(await walk('nobody', 3)).toEqual({ ids: [], pages: 1 });
    const all = await walk(null, 5);
    expect(all.ids).toEqual([
      's00',
      's01',
      's02',
      's03',
      's05',
      's06',
      's07',
      's08',
      's09',
      's10',
      's11',
    ]);
    expect(all.pages).toBe(3);
    expect(
      (await s.listSchedules({ limit: 11 })).nextCursor,
      'exactly a page: no cursor',
    ).toBeNull();
  });

  it('a write re-sent after a reconnect answers as its first send did, not as a conflict', async () => {
    // ioredis re-sends an unanswered script after a reconnect: the write token recognises it.
    const prefix = uniquePrefix();
    const s = store(prefix);
    await s.createSchedule('twice', def('v1'), { by: 'x' });
    const keys = scheduleKeys(prefix);
    const log = auditKeys(prefix);
    const k = [keys.records, keys.ids, keys.byHandler];
    k.push(log.log, log.entries, log.sequence, log.job('schedule:twice'));
    // the audit args: the record (as core builds it; only its action matters here) and bounds
    const audit = (action: string) => [
      JSON.stringify({ action, job: 'schedule:twice', by: 'x', note: null }),
      '100',
      '3600000',
    ];
    const raw = client();
    const replace = new RedisScript(REPLACE_SCHEDULE);
    const body = JSON.stringify({ trigger: def().trigger, data: 'v2', enabled: true, options: {} });
    const args = ['twice', 'report', body, 'bob', 'token-1', '1', keys.channel];
    const first = (await replace.run(raw, k, [...args, ...audit('schedule.update')])) as string[];
    const again = (await replace.run(raw, k, [...args, ...audit('schedule.update')])) as string[];
    expect(first[0]).toBe('ok');
    expect(again, 'the re-send answers the same record').toEqual(first);
    const other = (await replace.run(raw, k, [
      ...args.slice(0, 4),
      'token-2',
      '1',
      keys.channel,
      ...audit('schedule.update'),
    ])) as string[];
    expect(other, 'another writer from version 1 conflicts').toEqual(['conflict', '2']);
    const remove = new RedisScript(REMOVE_SCHEDULE);
    const removeArgs = ['twice', 'carol', 'token-3', '2', keys.channel, '2'];
    removeArgs.push(...audit('schedule.remove'));
    const removed = (await remove.run(raw, k, removeArgs)) as string[];
    const removedAgain = (await remove.run(raw, k, removeArgs)) as string[];
    expect(removedAgain, 'a re-sent remove answers the schedule as it was').toEqual(removed);
    expect(await s.getSchedule('twice')).toBeNull();
    // one audit entry per write that happened: neither re-send nor the conflict added one
    const entries = (await s.listAudit({ job: 'schedule:twice' })).entries;
    expect(entries.map((e) => [e.action, e.version])).toEqual([
      ['schedule.remove', undefined], // the crafted record above carries no version
      ['schedule.update', 2],
      ['schedule.create', 1],
    ]);
  });

  it('pushes changes by id; a killed subscriber resubscribes with a resync; the last unsubscribe closes it', async () => {
    const prefix = uniquePrefix();
    const watching = store(prefix);
    const writer = store(prefix);
    const heard: ScheduleChange[] = [];
    const unsubscribe = watching.watchSchedules((c) => heard.push(c));
    await until(() => heard.some((c) => c.kind === 'resync'), 10_000, 'the first subscription');
    await writer.createSchedule('pushed', def(), { by: 'x' });
    await writer.replaceSchedule('pushed', def('v2'), { by: 'x', expectedVersion: 1 });
    await writer.removeSchedule('pushed', { by: 'x', expectedVersion: 2 });
    await until(
      () => heard.filter((c) => c.kind === 'changed' && c.id === 'pushed').length === 3,
      10_000,
      'one message per write',
    );
    const conflict = await writer
      .replaceSchedule('pushed', def(), { by: 'x', expectedVersion: 1 })
      .catch((e) => e);
    expect(conflict).toMatchObject({ code: 'SCHEDULE_CONFLICT' });
    heard.length = 0;
    expect(await killScheduleSubscribers(sharedUrl(), prefix), 'one subscriber killed').toBe(1);
    await until(() => heard.some((c) => c.kind === 'resync'), 15_000, 'a resync after reconnect');
    expect(
      heard.filter((c) => c.kind === 'changed'),
      'a failed write publishes nothing',
    ).toEqual([]);
    unsubscribe();
    await until(async () => (await subscribers(prefix)) === 0, 10_000, 'the subscriber closed');
  }, 60_000);

  it('watches through a lazyConnect client too (its duplicate connects by itself)', async () => {
    const prefix = uniquePrefix();
    const lazy = newClient(sharedUrl(), { lazyConnect: true });
    opened.push(lazy);
    const watching = new RedisStore(lazy, { prefix });
    stores.push(watching);
    const heard: ScheduleChange[] = [];
    const unsubscribe = watching.watchSchedules((c) => heard.push(c));
    await until(() => heard.some((c) => c.kind === 'resync'), 10_000, 'the first subscription');
    await store(prefix).createSchedule('lazy', def(), { by: 'x' });
    await until(
      () => heard.some((c) => c.kind === 'changed' && c.id === 'lazy'),
      10_000,
      'a message for the create',
    );
    unsubscribe();
  });

  it('a ScheduleServer serves schedules again after a server crash and restart (AOF)', async () => {
    const server = await startRedis({ strategy: 'managed', appendOnly: true });
    const scheduler = new Scheduler({ lock: new MemoryLock() });
    try {
      const prefix = uniquePrefix();
      const served = store(prefix, server.url);
      const admin = store(prefix, server.url);
      const heard: ScheduleChange[] = [];
      const unwatch = served.watchSchedules((c) => heard.push(c));
      const scheduleServer = new ScheduleServer({
        scheduler,
        store: served,
        resyncMs: 600_000, // no periodic backstop inside the test: push and resync only
        handlers: { report: () => {} },
      });
      await scheduleServer.start();
      const servedIds = () =>
        scheduleServer
          .served()
          .map((x) => `${x.id}@${x.version}`)
          .join();
      await admin.createSchedule('kept', def(), { by: 'ops' });
      await until(() => servedIds() === 'kept@1', 10_000, 'the create to be applied');
      heard.length = 0;
      await server.restart({ crash: true });
      await until(() => heard.some((c) => c.kind === 'resync'), 20_000, 'a resync after restart');
      await admin.replaceSchedule('kept', def('v2'), { by: 'ops', expectedVersion: 1 });
      await admin.createSchedule('after', def(), { by: 'ops' });
      await until(
        () => servedIds() === 'after@1,kept@2',
        20_000,
        'the changes after the restart to be applied',
      );
      unwatch();
      await scheduleServer.stop();
    } finally {
      await scheduler.stop();
      await server.close();
    }
  }, 90_000);
});
