import {
  FleetClient,
  isFleetcronError,
  MemoryLock,
  type ScheduleChange,
  type ScheduleContext,
  type ScheduleDefinition,
  Scheduler,
  ScheduleServer,
} from '@fleetcron/core';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { scheduleChannel } from '../src/channel-listener.js';
import type { PostgresStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// Stored schedules on PostgreSQL beyond the shared contract: versioned writes racing from two
// pools, push through LISTEN/NOTIFY, and a LISTEN connection killed by the server.

const databaseUrl = postgresDatabase();
const create = storeFixtures(databaseUrl);

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

describe('PostgresStore stored schedules', () => {
  it('round-trips a schedule, stamps the database clock and who, keeps a tombstone', async () => {
    const fixture = await create();
    try {
      const store = (await fixture.newStore()) as PostgresStore;
      const before = Date.now();
      const data = { customer: 'acme', nul: 'a\u0000b', emoji: '🚀', nested: [1, { x: null }] };
      const s = await store.createSchedule('acme/daily', def(data), { by: 'alice\u0000' });
      expect(s).toMatchObject({ id: 'acme/daily', version: 1, data, createdBy: 'alice\u0000' });
      expect(s.createdAt).toBeGreaterThanOrEqual(before - 5_000);
      expect(await store.getSchedule('acme/daily')).toEqual(s);
      const dup = await store.createSchedule('acme/daily', def(), { by: 'bob' }).catch((e) => e);
      expect(isFleetcronError(dup, 'DUPLICATE_SCHEDULE')).toBe(true);
      const removed = await store.removeSchedule('acme/daily', { by: 'carol', expectedVersion: 1 });
      expect(removed).toEqual(s); // as it was
      expect(await store.getSchedule('acme/daily')).toBeNull();
      const stale = await store
        .replaceSchedule('acme/daily', def(), { by: 'dave', expectedVersion: 1 })
        .catch((e) => e);
      expect(stale).toMatchObject({ code: 'SCHEDULE_CONFLICT', actualVersion: null });
      expect((await store.createSchedule('acme/daily', def(), { by: 'erin' })).version).toBe(3);
      const unknown = await store
        .removeSchedule('never', { by: 'x', expectedVersion: null })
        .catch((e) => e);
      expect(isFleetcronError(unknown, 'UNKNOWN_SCHEDULE')).toBe(true);
    } finally {
      await fixture.close();
    }
  });

  it('of two clients updating from the same version exactly one wins, every round', async () => {
    const fixture = await create();
    try {
      const one = (await fixture.newStore()) as PostgresStore;
      const two = (await fixture.newStore()) as PostgresStore;
      await one.createSchedule('race', def(0), { by: 'x' });
      for (let round = 1; round <= 20; round++) {
        const results = await Promise.allSettled([
          one.replaceSchedule('race', def(`one-${round}`), { by: 'one', expectedVersion: round }),
          two.replaceSchedule('race', def(`two-${round}`), { by: 'two', expectedVersion: round }),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won, `round ${round}`).toHaveLength(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(lost.reason).toMatchObject({ code: 'SCHEDULE_CONFLICT', actualVersion: round + 1 });
        const winner = (won[0] as PromiseFulfilledResult<{ data: unknown; updatedBy: string }>)
          .value;
        const stored = await one.getSchedule('race');
        expect(stored).toMatchObject({
          version: round + 1,
          data: winner.data,
          updatedBy: winner.updatedBy,
        });
      }
    } finally {
      await fixture.close();
    }
  }, 30_000);

  it('lists by id in pages, filtered by handler', async () => {
    const fixture = await create();
    try {
      const store = (await fixture.newStore()) as PostgresStore;
      for (let i = 0; i < 12; i++) {
        await store.createSchedule(`s${String(i).padStart(2, '0')}`, def(i, i < 5 ? 'a' : 'b'), {
          by: 'x',
        });
      }
      await store.removeSchedule('s03', { by: 'x', expectedVersion: 1 });
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await store.listSchedules({ handler: 'a', limit: 2, cursor });
        ids.push(...page.schedules.map((s) => s.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(ids).toEqual(['s00', 's01', 's02', 's04']);
      expect((await store.listSchedules({ limit: 1000 })).schedules).toHaveLength(11);
    } finally {
      await fixture.close();
    }
  });

  it('pushes changes by id; after the server kills the LISTEN connection, a resync comes', async () => {
    const fixture = await create();
    try {
      const watching = (await fixture.newStore()) as PostgresStore;
      const writer = (await fixture.newStore()) as PostgresStore;
      const heard: ScheduleChange[] = [];
      const unsubscribe = watching.watchSchedules((c) => heard.push(c));
      await until(() => heard.some((c) => c.kind === 'resync'), 10_000, 'LISTEN to take effect');
      await writer.createSchedule('pushed', def(), { by: 'x' });
      await until(
        () => heard.some((c) => c.kind === 'changed' && c.id === 'pushed'),
        10_000,
        'a notification for the created schedule',
      );
      const channel = scheduleChannel(fixture.schema, 'fleetcron');
      const listeners = `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND query = 'LISTEN "${channel}"'`;
      heard.length = 0;
      const { rowCount } = await fixture.admin.query(
        `SELECT pg_terminate_backend(pid) FROM (${listeners}) l`,
      );
      expect(rowCount, 'one LISTEN connection was killed').toBe(1);
      await until(
        () => heard.some((c) => c.kind === 'resync'),
        15_000,
        'a resync after LISTEN came back',
      );
      unsubscribe();
      await until(
        async () => (await fixture.admin.query(listeners)).rowCount === 0,
        10_000,
        'the LISTEN connection to be given back',
      );
    } finally {
      await fixture.close();
    }
  }, 60_000);

  it('a ScheduleServer applies a change made while its LISTEN connection was dead', async () => {
    const fixture = await create();
    const lock = new MemoryLock();
    try {
      const served = (await fixture.newStore()) as PostgresStore;
      const admin = new FleetClient({ store: await fixture.newStore() });
      const scheduler = new Scheduler({ lock });
      const runs: string[] = [];
      const server = new ScheduleServer({
        scheduler,
        store: served,
        resyncMs: 600_000, // no periodic backstop inside the test: only push and the resync
        handlers: { report: (ctx: ScheduleContext) => void runs.push(ctx.schedule.id) },
      });
      await server.start();
      scheduler.start();
      const started = Date.now();
      await admin.createSchedule(
        { id: 'live', handler: 'report', trigger: { kind: 'every', ms: 3_600_000 } },
        { by: 'ops' },
      );
      await until(
        () => server.served().some((s) => s.id === 'live'),
        5_000,
        'the create to be applied',
      );
      const appliedMs = Date.now() - started;
      expect(appliedMs, 'applied within about a second').toBeLessThan(5_000);
      const channel = scheduleChannel(fixture.schema, 'fleetcron');
      await fixture.admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND query = 'LISTEN "${channel}"'`,
      );
      // made while no LISTEN is up: its notification is lost; the resync on re-LISTEN reads it
      await admin.updateSchedule('live', { data: 'v2' }, { by: 'ops', expectedVersion: 1 });
      await admin.createSchedule(
        { id: 'gap', handler: 'report', trigger: { kind: 'every', ms: 3_600_000 } },
        { by: 'ops' },
      );
      await until(
        () =>
          server
            .served()
            .map((s) => `${s.id}@${s.version}`)
            .join() === 'gap@1,live@2',
        15_000,
        'the changes made during the gap to be applied',
      );
      await server.stop();
      await scheduler.stop();
      await served.close();
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
