import {
  isFleetcronError,
  MemoryLock,
  type ScheduleChange,
  type ScheduleDefinition,
  Scheduler,
  ScheduleServer,
} from '@fleetcron/core';
import { startEtcd, waitFor } from '@fleetcron/testkit';
import { etcdEndpoints } from '@fleetcron/testkit/vitest';
import type { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdStore, type EtcdStoreOptions } from '../src/index.js';
import {
  type LinkedStoreFixture,
  lazy,
  linkedStoreFixture,
  linkedStoreFixtures,
} from './fixture.js';

// Stored schedules on etcd beyond the shared contract: bad input stores nothing, the typed
// errors of each write, paging (tombstones, the handler filter over several read batches,
// exact last pages), push by id with a resync on every (re)connect, and a change lost to a
// compaction while the watch was away (etcd cancels the resumed watch; the store watches anew
// and resyncs), which a store that never resyncs fails.

const create = linkedStoreFixtures(etcdEndpoints());
// Compaction is server-wide: that test gets a server of its own.
const dedicated = lazy(() => startEtcd({ strategy: 'managed' }));
afterAll(async () => {
  await (await dedicated()).close();
});

const def = (data: ScheduleDefinition['data'] = null, handler = 'report'): ScheduleDefinition => ({
  handler,
  trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' },
  data,
  enabled: true,
  options: { leaseMs: 10_000, note: 'nightly' },
});

async function withStores(
  body: (one: EtcdStore, two: EtcdStore, fixture: LinkedStoreFixture) => Promise<void>,
): Promise<void> {
  const fixture = await create();
  try {
    await body(
      (await fixture.newStore()) as EtcdStore,
      (await fixture.newStore()) as EtcdStore,
      fixture,
    );
  } finally {
    await fixture.close();
  }
}

async function failure(promise: Promise<unknown>): Promise<{ code?: string; field?: string }> {
  return promise.then(
    () => {
      throw new Error('expected a typed error, the call succeeded');
    },
    (e: unknown) => e as { code?: string; field?: string },
  );
}

describe('EtcdStore stored schedules', () => {
  it('bad input gets a typed error naming the field and stores nothing', async () => {
    await withStores(async (store, _two, fixture) => {
      const cases: [string, () => Promise<unknown>][] = [
        ['id', () => store.createSchedule('', def(), { by: 'a' })],
        ['id', () => store.createSchedule('no spaces', def(), { by: 'a' })],
        ['by', () => store.createSchedule('ok', def(), { by: ' ' })],
        [
          'trigger.expression',
          () =>
            store.createSchedule(
              'ok',
              { ...def(), trigger: { kind: 'cron', expression: '61 * * * *', tz: 'UTC' } },
              { by: 'a' },
            ),
        ],
        ['data', () => store.createSchedule('ok', def('x'.repeat(70 * 1024)), { by: 'a' })],
        [
          'expectedVersion',
          () => store.replaceSchedule('ok', def(), { by: 'a', expectedVersion: 0 }),
        ],
        ['expectedVersion', () => store.removeSchedule('ok', { by: 'a', expectedVersion: 1.5 })],
        ['limit', () => store.listSchedules({ limit: 1001 })],
        ['limit', () => store.listSchedules({ limit: 0 })],
        ['handler', () => store.listSchedules({ handler: '' })],
        ['cursor', () => store.listSchedules({ cursor: 'not-a-cursor' })],
      ];
      for (const [field, call] of cases) {
        const error = await failure(call());
        expect(isFleetcronError(error), `${field}: ${String(error)}`).toBe(true);
        expect(error.field, String(error)).toBe(field);
      }
      const keys = await fixture.admin.getAll().prefix(`${fixture.prefix}s/`).keys();
      expect(keys, 'no schedule key written').toEqual([]);
    });
  });

  it('each write gets its typed error: duplicate, unknown, stale, removed', async () => {
    await withStores(async (one, two) => {
      const before = Date.now();
      const data = { customer: 'acme', nul: 'a\u0000b', emoji: '🚀', nested: [1, { x: null }] };
      const s = await one.createSchedule('acme/daily:1', def(data), { by: 'alice' });
      expect(s).toMatchObject({ id: 'acme/daily:1', version: 1, data, createdBy: 'alice' });
      expect(s.createdAt).toBeGreaterThanOrEqual(before);
      expect(await two.getSchedule('acme/daily:1')).toEqual(s);
      expect(await failure(two.createSchedule('acme/daily:1', def(), { by: 'b' }))).toMatchObject({
        code: 'DUPLICATE_SCHEDULE',
        field: 'id',
      });
      expect(
        await failure(two.replaceSchedule('never', def(), { by: 'b', expectedVersion: 1 })),
      ).toMatchObject({ code: 'UNKNOWN_SCHEDULE' });
      const v2 = await two.replaceSchedule('acme/daily:1', def('v2'), {
        by: 'bob',
        expectedVersion: 1,
      });
      expect(v2).toMatchObject({ version: 2, createdBy: 'alice', updatedBy: 'bob', data: 'v2' });
      expect(
        await failure(one.replaceSchedule('acme/daily:1', def(), { by: 'a', expectedVersion: 1 })),
      ).toMatchObject({ code: 'SCHEDULE_CONFLICT', expectedVersion: 1, actualVersion: 2 });
      expect(
        await failure(one.removeSchedule('acme/daily:1', { by: 'a', expectedVersion: 1 })),
      ).toMatchObject({ code: 'SCHEDULE_CONFLICT', actualVersion: 2 });
      const removed = await one.removeSchedule('acme/daily:1', { by: 'c', expectedVersion: null });
      expect(removed, 'remove resolves the schedule as it was').toEqual(v2);
      expect(await two.getSchedule('acme/daily:1')).toBeNull();
      // the tombstone is version 3: even a writer naming it is refused, not revived
      expect(
        await failure(two.replaceSchedule('acme/daily:1', def(), { by: 'd', expectedVersion: 3 })),
      ).toMatchObject({ code: 'SCHEDULE_CONFLICT', actualVersion: null });
      expect(
        await failure(two.removeSchedule('acme/daily:1', { by: 'd', expectedVersion: null })),
      ).toMatchObject({ code: 'UNKNOWN_SCHEDULE' });
      expect((await two.createSchedule('acme/daily:1', def(), { by: 'e' })).version).toBe(4);
    });
  });

  it('two creates of one new id at once: exactly one wins, the other is DUPLICATE_SCHEDULE', async () => {
    await withStores(async (one, two) => {
      for (let round = 0; round < 10; round++) {
        const results = await Promise.allSettled([
          one.createSchedule(`new-${round}`, def('one'), { by: 'one' }),
          two.createSchedule(`new-${round}`, def('two'), { by: 'two' }),
        ]);
        const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
        expect(lost.length, `round ${round}: one create loses`).toBe(1);
        expect(isFleetcronError(lost[0]!.reason, 'DUPLICATE_SCHEDULE')).toBe(true);
      }
    });
  });

  it('pages by id past tombstones, filters by handler over several read batches, ends exactly', async () => {
    await withStores(async (store) => {
      // 520 of handler a (more than one read batch of 500), then 3 of b at the end of the range
      const ids = Array.from({ length: 520 }, (_, i) => `a/${String(i).padStart(4, '0')}`);
      for (let i = 0; i < ids.length; i += 40) {
        await Promise.all(
          ids.slice(i, i + 40).map((id) => store.createSchedule(id, def(null, 'a'), { by: 'x' })),
        );
      }
      for (const id of ['b/1', 'b/2', 'b/3']) {
        await store.createSchedule(id, def(null, 'b'), { by: 'x' });
      }
      for (const id of ['a/0001', 'a/0002', 'b/2']) {
        await store.removeSchedule(id, { by: 'x', expectedVersion: 1 });
      }
      const b1 = await store.listSchedules({ handler: 'b', limit: 1 });
      expect(b1.schedules.map((s) => s.id)).toEqual(['b/1']);
      const b2 = await store.listSchedules({ handler: 'b', limit: 1, cursor: b1.nextCursor });
      expect(
        b2.schedules.map((s) => s.id),
        'the tombstone b/2 is skipped',
      ).toEqual(['b/3']);
      expect(b2.nextCursor, 'the last page has no cursor').toBeNull();
      const exact = await store.listSchedules({ handler: 'b', limit: 2 });
      expect(exact.schedules.map((s) => s.id)).toEqual(['b/1', 'b/3']);
      expect(exact.nextCursor, 'a page that ends exactly at the last one has no cursor').toBeNull();

      const first = await store.listSchedules({ limit: 3 });
      expect(first.schedules.map((s) => s.id)).toEqual(['a/0000', 'a/0003', 'a/0004']);
      // a cursor stays valid when its schedule is removed since
      await store.removeSchedule('a/0004', { by: 'x', expectedVersion: null });
      const next = await store.listSchedules({ limit: 2, cursor: first.nextCursor });
      expect(next.schedules.map((s) => s.id)).toEqual(['a/0005', 'a/0006']);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await store.listSchedules({ limit: 1000, cursor });
        seen.push(...page.schedules.map((s) => s.id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(seen.length, 'every live schedule once').toBe(520 + 3 - 4);
      expect([...seen].sort()).toEqual(seen);
      expect((await store.listSchedules({ handler: 'nobody' })).schedules).toEqual([]);
    });
  }, 60_000);

  it("reads a page larger than gRPC's 4 MiB message limit in smaller batches", async () => {
    await withStores(async (store) => {
      // 80 schedules of 60 KB data: one read of them all is 4.8 MB, over the client's limit
      const big = 'x'.repeat(60_000);
      for (let i = 0; i < 80; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, j) =>
            store.createSchedule(`big-${String(i + j).padStart(2, '0')}`, def(big), { by: 'x' }),
          ),
        );
      }
      const all = await store.listSchedules({ limit: 100 });
      expect(all.schedules.length).toBe(80);
      expect(all.schedules.every((s) => s.data === big)).toBe(true);
      const first = await store.listSchedules({ limit: 70 });
      const rest = await store.listSchedules({ limit: 70, cursor: first.nextCursor });
      expect([...first.schedules, ...rest.schedules].map((s) => s.id)).toEqual(
        all.schedules.map((s) => s.id),
      );
      expect(rest.nextCursor).toBeNull();
    });
  }, 60_000);

  it('pushes each change by id, resyncs when the watch (re)connects, stops on unsubscribe', async () => {
    await withStores(async (watching, writer, fixture) => {
      const heard: ScheduleChange[] = [];
      const stop = watching.watchSchedules((change) => heard.push(change));
      await waitFor(() => heard.some((c) => c.kind === 'resync'), {
        timeoutMs: 10_000,
        message: 'a resync when the watch first takes effect',
      });
      await writer.createSchedule('pushed', def(), { by: 'w' });
      await writer.replaceSchedule('pushed', def(1), { by: 'w', expectedVersion: 1 });
      await writer.removeSchedule('pushed', { by: 'w', expectedVersion: 2 });
      await waitFor(
        () => heard.filter((c) => c.kind === 'changed' && c.id === 'pushed').length === 3,
        {
          timeoutMs: 10_000,
          message: 'three changes of "pushed"',
        },
      );
      const resyncs = heard.filter((c) => c.kind === 'resync').length;
      expect(fixture.cutWatchers()).toBe(1);
      await waitFor(() => heard.filter((c) => c.kind === 'resync').length > resyncs, {
        timeoutMs: 20_000,
        message: 'a resync after the connection was cut',
      });
      await writer.createSchedule('after-cut', def(), { by: 'w' });
      await waitFor(() => heard.some((c) => c.kind === 'changed' && c.id === 'after-cut'), {
        timeoutMs: 10_000,
        message: 'push again after the cut',
      });
      stop();
      const count = heard.length;
      await writer.createSchedule('unheard', def(), { by: 'w' });
      // the write is done; a round trip through the watching store's connection lets a stray
      // event arrive before the check
      await watching.getSchedule('unheard');
      expect(heard.slice(count), 'nothing heard after unsubscribe').toEqual([]);
    });
  }, 60_000);

  it('close() with a listener cancels the watch; a watch asked for after close hears nothing', async () => {
    await withStores(async (watching, writer) => {
      const heard: ScheduleChange[] = [];
      watching.watchSchedules((change) => heard.push(change));
      await waitFor(() => heard.some((c) => c.kind === 'resync'), {
        timeoutMs: 10_000,
        message: 'the watch to take effect',
      });
      await watching.close();
      const late: ScheduleChange[] = [];
      const stop = watching.watchSchedules((change) => late.push(change));
      const count = heard.length;
      await writer.createSchedule('after-close', def(), { by: 'w' });
      // a second store watching beside it hears the write: the first one would have by then
      const witness: ScheduleChange[] = [];
      const unwatch = writer.watchSchedules((change) => witness.push(change));
      await writer.replaceSchedule('after-close', def(1), { by: 'w', expectedVersion: 1 });
      await waitFor(() => witness.some((c) => c.kind === 'changed'), {
        timeoutMs: 10_000,
        message: 'the witness to hear the change',
      });
      unwatch();
      stop();
      expect(heard.slice(count), 'the closed store heard nothing').toEqual([]);
      expect(late, 'a watch asked for after close heard nothing').toEqual([]);
    });
  });
});

/** A store that forwards changes but drops every `resync`. */
class NeverResyncs extends EtcdStore {
  override watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    return super.watchSchedules((change) => {
      if (change.kind !== 'resync') listener(change);
    });
  }
}

/**
 * A change made while the watching store's link is stalled, the revision compacted, then the
 * connection cut: etcd3 resumes the watch from a compacted revision, etcd cancels it, the change
 * is never replayed. A `ScheduleServer` without a periodic backstop must still apply it.
 */
async function changeLostToCompaction(
  S: new (client: Etcd3, options: EtcdStoreOptions) => EtcdStore,
  timeoutMs: number,
): Promise<void> {
  const etcd = await dedicated();
  const fixture = await linkedStoreFixture(etcd, {}, S);
  const scheduler = new Scheduler({ lock: new MemoryLock() });
  const served = (await fixture.newStore()) as EtcdStore;
  const admin = (await fixture.newStore()) as EtcdStore;
  const server = new ScheduleServer({
    scheduler,
    store: served,
    resyncMs: 3_600_000,
    handlers: { report: () => {} },
  });
  try {
    await server.start();
    await admin.createSchedule('compacted', def(), { by: 'setup' });
    await waitFor(() => server.served().some((s) => s.id === 'compacted'), {
      timeoutMs: 10_000,
      message: 'the create to be pushed',
    });
    fixture.stallWatchers();
    await admin.replaceSchedule('compacted', def('during'), { by: 'admin', expectedVersion: 1 });
    // one write past the change, so compacting to the head removes the change's own revision
    // (the revision the resumed watch asks for)
    await fixture.admin.put(`${fixture.prefix}unrelated`).value('x');
    const { header } = await fixture.admin.kv.range({ key: Buffer.from(fixture.prefix) });
    await fixture.admin.kv.compact({ revision: header.revision, physical: true });
    expect(fixture.cutWatchers()).toBe(1);
    await waitFor(() => server.served().some((s) => s.id === 'compacted' && s.version === 2), {
      timeoutMs,
      message: 'the change lost to the compaction applied (resync)',
    });
  } finally {
    await server.stop();
    await scheduler.stop();
    await fixture.close();
  }
}

describe('EtcdStore schedule watch and compaction', () => {
  it('a change lost to a compaction while the watch was away is applied through the resync', async () => {
    await changeLostToCompaction(EtcdStore, 15_000);
  }, 60_000);

  it('(se4) a store that never resyncs fails the same check', async () => {
    // the real store applies it in under 1.5 s (a re-watch 1 s after the cancel)
    await expect(changeLostToCompaction(NeverResyncs, 5_000)).rejects.toThrow(/not met within/);
  }, 60_000);
});
