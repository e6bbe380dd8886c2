import { describe, expect, it } from 'vitest';
import {
  BackendUnavailableError,
  every,
  FakeClock,
  FleetClient,
  MemoryLock,
  MemoryStore,
  type ScheduleContext,
  type ScheduleQuery,
  Scheduler,
  ScheduleServer,
} from '../../src/index.js';
import { jitterOffset } from '../../src/scheduler/job/index.js';
import { allHistory, recordEvents, settle } from '../scheduler/helpers.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1, 10, 0, 0);

interface Run {
  instanceId: string;
  id: string;
  fireAt: number;
  version: number;
  data: unknown;
}

/** A fleet of schedulers on one MemoryLock and one MemoryStore, each with a ScheduleServer. */
function fleetOf(
  ids: string[],
  options: { store?: (clock: FakeClock) => MemoryStore; runMs?: number } = {},
) {
  const clock = new FakeClock(T0);
  const lock = new MemoryLock({ clock });
  const store = options.store?.(clock) ?? new MemoryStore({ clock });
  const runs: Run[] = [];
  const report = async (ctx: ScheduleContext) => {
    runs.push({
      instanceId: ctx.instanceId,
      id: ctx.schedule.id,
      fireAt: ctx.fireAt.getTime(),
      version: ctx.schedule.version,
      data: ctx.schedule.data,
    });
    if (options.runMs) await ctx.clock.sleep(options.runMs);
  };
  const members = ids.map((instanceId) => {
    const scheduler = new Scheduler({ lock, store, clock, instanceId });
    const server = new ScheduleServer({ scheduler, store, clock, handlers: { report } });
    return { scheduler, server };
  });
  const fleet = new FleetClient({ store, clock });
  const start = async () => {
    for (const m of members) await m.server.start();
    for (const m of members) m.scheduler.start();
    await settle(clock);
  };
  const stop = async () => {
    for (const m of members) await m.server.stop();
    const stopping = Promise.all(members.map((m) => m.scheduler.stop()));
    await clock.advance(1_000);
    await stopping;
  };
  return { clock, lock, store, runs, members, fleet, start, stop };
}

const everyMinute = { kind: 'every', ms: MIN } as const;

describe('ScheduleServer: stored schedules served by handlers registered in code', () => {
  it('adds one job per enabled schedule of a served handler; the run sees ctx.schedule', async () => {
    const f = fleetOf(['a']);
    await f.fleet.createSchedule(
      { id: 'acme', handler: 'report', trigger: everyMinute, data: { customer: 'acme' } },
      { by: 'alice' },
    );
    await f.fleet.createSchedule(
      { id: 'other', handler: 'not-served-here', trigger: everyMinute },
      { by: 'alice' },
    );
    await f.fleet.createSchedule(
      { id: 'off', handler: 'report', trigger: everyMinute, enabled: false },
      { by: 'alice' },
    );
    const codeRuns: number[] = [];
    f.members[0]!.scheduler.add({
      name: 'code-job',
      trigger: every(MIN),
      run: (ctx) => void codeRuns.push(ctx.fireAt.getTime()),
    });
    await f.start();
    expect(f.members[0]!.server.served()).toEqual([
      { id: 'acme', handler: 'report', version: 1, job: 'schedule:acme' },
    ]);
    expect(
      f.members[0]!.scheduler.jobs()
        .map((j) => j.name)
        .sort(),
    ).toEqual(['code-job', 'schedule:acme']);
    await f.clock.advance(MIN);
    expect(f.runs).toEqual([
      { instanceId: 'a', id: 'acme', fireAt: T0 + MIN, version: 1, data: { customer: 'acme' } },
    ]);
    expect(codeRuns).toEqual([T0 + MIN]); // code-defined jobs are untouched
    const rows = await allHistory(f.store, 'schedule:acme');
    expect(rows.map((r) => [r.fireAt, r.status])).toEqual([[T0 + MIN, 'succeeded']]);
    await f.stop();
  });

  it('options.jitterMs: each fire of the schedule starts its fixed offset after the fire time', async () => {
    const f = fleetOf(['a', 'b']);
    await f.fleet.createSchedule(
      { id: 'acme', handler: 'report', trigger: everyMinute, options: { jitterMs: 20_000 } },
      { by: 'alice' },
    );
    await f.start();
    const offset = jitterOffset(
      { name: 'schedule:acme', trigger: every(MIN), jitterMs: 20_000 },
      T0 + MIN,
    );
    expect(offset, 'a fire with an offset to see').toBeGreaterThan(0);
    for (let t = 0; t < MIN + 20_000; t += 1_000) await f.clock.advance(1_000);
    const rows = await allHistory(f.store, 'schedule:acme');
    expect(rows.map((r) => [r.fireAt, r.startedAt - r.fireAt, r.status])).toEqual([
      [T0 + MIN, offset, 'succeeded'],
    ]);
    await f.stop();
  });

  it('applies an edit, a disable, an enable and a remove from another process without restart', async () => {
    const f = fleetOf(['a']);
    await f.start();
    const s = await f.fleet.createSchedule(
      { id: 'x', handler: 'report', trigger: everyMinute, data: 1 },
      { by: 'alice' },
    );
    await settle(f.clock);
    expect(f.members[0]!.server.served().map((x) => x.version)).toEqual([1]);
    await f.clock.advance(MIN);
    await f.fleet.updateSchedule('x', { data: 2 }, { by: 'bob', expectedVersion: s.version });
    await settle(f.clock);
    await f.clock.advance(MIN);
    expect(f.runs.map((r) => [r.fireAt - T0, r.version, r.data])).toEqual([
      [MIN, 1, 1],
      [2 * MIN, 2, 2],
    ]);
    await f.fleet.disableSchedule('x', { by: 'carol' });
    await settle(f.clock);
    expect(f.members[0]!.scheduler.jobs()).toEqual([]);
    await f.clock.advance(3 * MIN);
    expect(f.runs).toHaveLength(2); // no fire while disabled
    await f.fleet.enableSchedule('x', { by: 'carol' });
    await settle(f.clock);
    await f.clock.advance(MIN);
    expect(f.runs.map((r) => [r.fireAt - T0, r.version])).toContainEqual([6 * MIN, 4]);
    await f.fleet.removeSchedule('x', { by: 'dave' });
    await settle(f.clock);
    expect(f.members[0]!.server.served()).toEqual([]);
    expect(f.members[0]!.scheduler.jobs()).toEqual([]);
    const count = f.runs.length;
    await f.clock.advance(3 * MIN);
    expect(f.runs).toHaveLength(count);
    await f.stop();
  });

  it('an edit never fires retroactively: the new trigger starts after the change', async () => {
    const f = fleetOf(['a', 'b']);
    await f.fleet.createSchedule(
      { id: 'h', handler: 'report', trigger: { kind: 'cron', expression: '0 * * * *' } },
      { by: 'alice' },
    );
    await f.start();
    await f.clock.advance(30 * MIN); // 10:30; the hourly schedule fired at no point yet
    expect(f.runs).toEqual([]);
    await f.fleet.updateSchedule(
      'h',
      { trigger: { kind: 'cron', expression: '*/10 * * * *' } },
      { by: 'bob', expectedVersion: 1 },
    );
    await settle(f.clock);
    await f.clock.advance(30 * MIN); // to 11:00
    // 10:10, 10:20 and 10:30 belong to the old version (hourly): none of them runs
    expect(f.runs.map((r) => (r.fireAt - T0) / MIN)).toEqual([40, 50, 60]);
    expect(f.runs.every((r) => r.version === 2)).toBe(true);
    await f.stop();
  });

  it('a run of the old version in progress finishes with it; no fire runs twice across edits', async () => {
    const f = fleetOf(['a', 'b'], { runMs: 20_000 });
    await f.fleet.createSchedule(
      { id: 'x', handler: 'report', trigger: everyMinute, data: 'v1' },
      { by: 'a' },
    );
    await f.start();
    await f.clock.advance(MIN + 5_000); // the fire at 1 min runs for 20 s
    expect(f.runs.map((r) => [r.fireAt - T0, r.data])).toEqual([[MIN, 'v1']]);
    // the same trigger, new data: the job is removed and added again under the same name
    await f.fleet.updateSchedule('x', { data: 'v2' }, { by: 'b', expectedVersion: 1 });
    await settle(f.clock);
    await f.clock.advance(MIN - 5_000 - 50); // 50 ms before the fire at 2 min: prepared ahead
    await f.fleet.updateSchedule('x', { data: 'v3' }, { by: 'c', expectedVersion: 2 });
    await settle(f.clock);
    await f.clock.advance(3 * MIN + 1_000); // to 5 min + 950 ms
    const fires = f.runs.map((r) => r.fireAt - T0);
    expect(fires).toEqual([MIN, 2 * MIN, 3 * MIN, 4 * MIN, 5 * MIN]); // each once, fleet-wide
    expect(f.runs.slice(1).every((r) => r.data === 'v3')).toBe(true);
    const rows = await allHistory(f.store, 'schedule:x');
    expect(rows.filter((r) => r.fireAt === T0 + MIN).map((r) => r.status)).toEqual(['succeeded']);
    await f.clock.advance(20_000); // the run of 5 min ends
    await f.stop();
  });

  it('run now: a fleet run request for schedule:<id> runs it once, with ctx.schedule', async () => {
    const f = fleetOf(['a', 'b']);
    await f.fleet.createSchedule(
      {
        id: 'now',
        handler: 'report',
        trigger: { kind: 'cron', expression: '0 0 1 1 *' },
        data: 'd',
      },
      { by: 'alice' },
    );
    await f.start();
    await f.clock.advance(1_000); // heartbeats have registered schedule:now
    await f.fleet.requestRun('schedule:now', { by: 'ops' });
    await f.clock.advance(1_000);
    await settle(f.clock);
    expect(f.runs.map((r) => [r.id, r.version, r.data])).toEqual([['now', 1, 'd']]);
    const rows = await allHistory(f.store, 'schedule:now');
    expect(rows.map((r) => [r.status, r.requestedBy])).toEqual([['succeeded', 'ops']]);
    await f.stop();
  });

  it('the fleet view of schedules: who serves each, and which enabled ones nobody serves', async () => {
    const f = fleetOf(['a', 'b']);
    for (const [id, handler, enabled] of [
      ['served', 'report', true],
      ['nobody', 'not-registered', true],
      ['off', 'report', false],
    ] as const) {
      await f.fleet.createSchedule({ id, handler, trigger: everyMinute, enabled }, { by: 'x' });
    }
    await f.start();
    await f.clock.advance(1_000); // both have heartbeated with their jobs
    const view = await f.fleet.schedules();
    expect(view.schedules.map((s) => [s.id, s.servedBy, s.unserved])).toEqual([
      ['nobody', [], true],
      ['off', [], false],
      ['served', ['a', 'b'], false],
    ]);
    await f.stop();
  });

  it('polls a store without push: a change is applied within pollMs', async () => {
    const f = fleetOf(['a'], {
      store: (clock) => {
        const store = new MemoryStore({ clock });
        Object.defineProperty(store, 'watchSchedules', { value: undefined });
        return store;
      },
    });
    await f.start();
    await f.fleet.createSchedule({ id: 'p', handler: 'report', trigger: everyMinute }, { by: 'a' });
    await settle(f.clock);
    expect(f.members[0]!.server.served()).toEqual([]); // not yet: no push
    const rec = recordEvents();
    await f.clock.advance(1_000);
    expect(f.members[0]!.server.served().map((s) => s.id)).toEqual(['p']);
    await f.clock.advance(5_000); // five more full reads of an unchanged schedule
    rec.stop();
    const scheduled = rec.events.filter(
      (e) => e.type === 'fire.scheduled' && e.job === 'schedule:p',
    );
    expect(scheduled, 'an unchanged schedule is not added again').toHaveLength(1);
    await f.fleet.removeSchedule('p', { by: 'a' });
    await f.clock.advance(1_000);
    expect(f.members[0]!.server.served()).toEqual([]);
    await f.stop();
  });

  it('a failed read is retried by a full resync; a missed change is then applied', async () => {
    let failing = false;
    class FlakyStore extends MemoryStore {
      override listSchedules(query?: ScheduleQuery) {
        if (failing) return Promise.reject(new BackendUnavailableError('memory', 'list'));
        return super.listSchedules(query);
      }
      override getSchedule(id: string) {
        if (failing) return Promise.reject(new BackendUnavailableError('memory', 'get'));
        return super.getSchedule(id);
      }
    }
    const f = fleetOf(['a'], { store: (clock) => new FlakyStore({ clock }) });
    await f.start();
    failing = true;
    await f.fleet
      .createSchedule({ id: 'r', handler: 'report', trigger: everyMinute }, { by: 'a' })
      .catch(() => {});
    // createSchedule does not read; the push arrives and its read fails
    await settle(f.clock);
    expect(f.members[0]!.server.served()).toEqual([]);
    failing = false;
    await f.clock.advance(1_000); // the resync planned after the failure
    expect(f.members[0]!.server.served().map((s) => s.id)).toEqual(['r']);
    await f.stop();
  });

  it('a schedule the scheduler refuses is listed with its error, others are served', async () => {
    const f = fleetOf(['a']);
    f.members[0]!.scheduler.add({ name: 'schedule:taken', trigger: every(MIN), run: () => {} });
    await f.fleet.createSchedule(
      { id: 'taken', handler: 'report', trigger: everyMinute },
      { by: 'a' },
    );
    await f.fleet.createSchedule(
      { id: 'fine', handler: 'report', trigger: everyMinute },
      { by: 'a' },
    );
    await f.start();
    const server = f.members[0]!.server;
    expect(server.served().map((s) => s.id)).toEqual(['fine']);
    expect(server.refusedSchedules()).toMatchObject([
      { id: 'taken', version: 1, error: { code: 'DUPLICATE_JOB' } },
    ]);
    await f.stop();
  });

  /**
   * A fleet serving an every-minute `catchUp: 'latest'` schedule runs 10:01 and 10:02, is down
   * from 10:02:01, the schedule is edited `editAt` ms after 10:00 while it is down, and the
   * fleet starts again `startAt` ms after 10:00.
   */
  async function downAndEdited(editAt: number, startAt: number) {
    const f = fleetOf(['a'], {});
    await f.fleet.createSchedule(
      {
        id: 'c',
        handler: 'report',
        trigger: everyMinute,
        data: 'v1',
        options: { catchUp: 'latest' },
      },
      { by: 'a' },
    );
    await f.start();
    await f.clock.advance(2 * MIN);
    await f.stop();
    await f.clock.advanceTo(T0 + editAt);
    await f.fleet.updateSchedule('c', { data: 'v2' }, { by: 'b', expectedVersion: 1 });
    await f.clock.advanceTo(T0 + startAt);
    f.runs.length = 0;
    await f.start();
    await f.clock.advance(6_000);
    await settle(f.clock, 20);
    return f;
  }

  it('catch-up at a fleet start owes no fire from before the last change', async () => {
    const f = await downAndEdited(9 * MIN + 15_000, 9 * MIN + 30_000);
    // 'latest' would run 10:09, but it is from before the edit: owed by no version
    expect(f.runs).toEqual([]);
    await f.clock.advanceTo(T0 + 10 * MIN); // the first fire after the edit
    expect(f.runs.map((r) => [(r.fireAt - T0) / MIN, r.data])).toEqual([[10, 'v2']]);
    await f.stop();
  });

  it('catch-up at a fleet start runs a missed fire from after the last change', async () => {
    const f = await downAndEdited(5 * MIN + 1_000, 9 * MIN + 31_000);
    expect(f.runs.map((r) => [(r.fireAt - T0) / MIN, r.data])).toEqual([[9, 'v2']]);
    await f.stop();
  });

  it('refuses a store without stored schedules and bad handlers, naming the field', () => {
    const clock = new FakeClock();
    const scheduler = new Scheduler({ lock: new MemoryLock({ clock }), clock });
    const store = new MemoryStore({ clock });
    const bare = { backend: 'bare', record: async () => {} } as never;
    expect(() => new ScheduleServer({ scheduler, store: bare, handlers: { h: () => {} } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', field: 'store' }),
    );
    expect(() => new ScheduleServer({ scheduler, store, handlers: { '9x': () => {} } })).toThrow(
      expect.objectContaining({ field: 'handlers["9x"]' }),
    );
    expect(
      () =>
        new ScheduleServer({
          scheduler,
          store,
          handlers: { h: { run: () => {}, defaults: { leaseMs: -5 } } },
        }),
    ).toThrow(expect.objectContaining({ field: 'handlers["h"].defaults.leaseMs' }));
    expect(() => new ScheduleServer({ scheduler, store, handlers: {} })).toThrow(
      expect.objectContaining({ field: 'handlers' }),
    );
  });
});

describe('handler defaults and stored options', () => {
  it('retry and timeout of the schedule wrap the handler; a stored option beats the default', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore({ clock });
    const scheduler = new Scheduler({ lock: new MemoryLock({ clock }), store, clock });
    const attempts: number[] = [];
    const server = new ScheduleServer({
      scheduler,
      store,
      clock,
      handlers: {
        flaky: {
          run: (ctx) => {
            attempts.push(ctx.attempt);
            throw new Error('boom');
          },
          defaults: { retry: { attempts: 2, jitter: 'none', backoff: { initialMs: 1_000 } } },
        },
      },
    });
    const fleet = new FleetClient({ store, clock });
    await fleet.createSchedule(
      {
        id: 'f',
        handler: 'flaky',
        trigger: { kind: 'every', ms: MIN },
        options: { retry: { attempts: 3, jitter: 'none', backoff: { initialMs: 1_000 } } },
      },
      { by: 'a' },
    );
    await server.start();
    scheduler.start();
    await clock.advance(MIN + 5_000);
    expect(attempts).toEqual([1, 2, 3]);
    const rows = await allHistory(store, 'schedule:f');
    expect(rows.map((r) => [r.status, r.attempt])).toEqual([['failed', 3]]);
    await server.stop();
    const stopping = scheduler.stop();
    await clock.advance(1_000);
    await stopping;
  });
});
