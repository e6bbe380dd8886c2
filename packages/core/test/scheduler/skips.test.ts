import { describe, expect, it } from 'vitest';
import {
  every,
  FakeClock,
  type FleetcronEvent,
  isFleetcronError,
  type JobContext,
  MemoryLock,
  MemoryStore,
  type Middleware,
  Scheduler,
  subscribe,
  timeout,
} from '../../src/index.js';
import { allHistory, BrokenStore, FlakyLock, firesBetween, recordEvents } from './helpers.js';

const ofType = <T extends FleetcronEvent['type']>(events: FleetcronEvent[], type: T) =>
  events.filter((e): e is Extract<FleetcronEvent, { type: T }> => e.type === type);

describe('skips (overlap, backend down, paused) and failures', () => {
  it('records a busy fire (overlap skip) exactly once across the fleet', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore();
    const ran: number[] = [];
    const fleet = ['a', 'b'].map((id) => {
      const s = new Scheduler({ lock, store, clock: fake, instanceId: id });
      s.add({
        name: 'slow',
        trigger: every(1000),
        run: async (ctx) => {
          ran.push(ctx.fireAt.getTime());
          await ctx.clock.sleep(2_500);
        },
      });
      return s;
    });
    const start = fake.now();
    for (const s of fleet) s.start();
    await fake.advance(12_000);
    const stopped = Promise.all(fleet.map((s) => s.stop()));
    await fake.advance(3_000);
    await stopped;

    const history = await allHistory(store, 'slow');
    const byFire = new Map<number, string[]>();
    for (const e of history) {
      byFire.set(e.fireAt, [...(byFire.get(e.fireAt) ?? []), `${e.status}:${e.reason ?? ''}`]);
    }
    const fires = firesBetween(1000, start + 1, start + 12_000);
    expect([...byFire.keys()].sort((a, b) => a - b)).toEqual(fires);
    // run, busy, busy, run, ...: each fire exactly one record
    fires.forEach((fireAt, i) => {
      expect(byFire.get(fireAt)).toEqual([i % 3 === 0 ? 'succeeded:' : 'skipped:overlap']);
    });
    expect(ran).toEqual(fires.filter((_, i) => i % 3 === 0));
  });

  it('backend down: fires are skipped and recorded, never run; claims resume by themselves', async () => {
    const fake = new FakeClock();
    const lock = new FlakyLock(new MemoryLock({ clock: fake }));
    const store = new MemoryStore();
    const rec = recordEvents();
    const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a' });
    const ran: number[] = [];
    s.add({ name: 'job', trigger: every(1000), run: (ctx) => void ran.push(ctx.fireAt.getTime()) });
    const start = fake.now();
    s.start();
    await fake.advance(3_000);
    lock.down = true;
    await fake.advance(3_000);
    lock.down = false;
    await fake.advance(3_000);
    await s.stop();
    rec.stop();

    const downFires = firesBetween(1000, start + 3001, start + 6000);
    const upFires = firesBetween(1000, start + 1, start + 9000).filter(
      (f) => !downFires.includes(f),
    );
    expect(ran).toEqual(upFires);
    const history = await allHistory(store, 'job');
    const skipped = history.filter((e) => e.status === 'skipped');
    expect(skipped.map((e) => e.fireAt).sort((a, b) => a - b)).toEqual(downFires);
    expect(new Set(skipped.map((e) => e.reason))).toEqual(new Set(['backend_unavailable']));
    expect(skipped[0]!.error).toContain('backend unavailable');
    expect(ofType(rec.events, 'claim.failed').map((e) => e.fireAt)).toEqual(downFires);
    const skippedEvents = ofType(rec.events, 'fire.skipped');
    expect(skippedEvents.every((e) => e.reason === 'backend_unavailable')).toBe(true);
    expect(skippedEvents).toHaveLength(downFires.length);
  });

  it('a lock that stops answering: claims give up after the lease, stop() still returns', async () => {
    const fake = new FakeClock();
    const memory = new MemoryLock({ clock: fake });
    const lock = new FlakyLock(memory);
    const store = new MemoryStore();
    const rec = recordEvents();
    const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a', leaseMs: 2000 });
    const ran: number[] = [];
    s.add({ name: 'job', trigger: every(1000), run: (c) => void ran.push(c.fireAt.getTime()) });
    const start = fake.now();
    s.start();
    await fake.advance(1_000);
    lock.hang = true; // the release of fire 1 is still in flight: it hangs too
    await fake.advance(3_000);
    lock.hang = false;
    await fake.advance(3_000);
    const stopping = s.stop({ drainMs: 1_000 });
    await fake.advance(5_000);
    await stopping;
    rec.stop();
    expect(fake.pendingTimers()).toBe(0);
    // fires 2..4 claimed into the void: skipped as backend_unavailable once their lease elapsed
    const history = await allHistory(store, 'job');
    const skipped = history.filter((e) => e.status === 'skipped').map((e) => e.fireAt);
    expect(skipped.sort((x, y) => x - y)).toEqual([2000, 3000, 4000].map((d) => start + d));
    expect(ran).toEqual([1000, 5000, 6000, 7000].map((d) => start + d));
    const failed = rec.events.filter((e) => e.type === 'claim.failed' && e.instanceId === 'a');
    expect(failed).toHaveLength(3);
  });

  it('a failing store never affects runs; failures are published as store.failed', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const rec = recordEvents();
    const s = new Scheduler({ lock, store: new BrokenStore(), clock: fake, instanceId: 'a' });
    const ran: number[] = [];
    s.add({ name: 'job', trigger: every(1000), run: (ctx) => void ran.push(ctx.fireAt.getTime()) });
    s.start();
    await fake.advance(5_000);
    const stopping = s.stop(); // outcome writes are retried until the drain ends
    await fake.advance(15_000);
    await stopping;
    rec.stop();
    expect(ran).toHaveLength(5);
    const failed = ofType(rec.events, 'store.failed');
    // per run: getJobState, record(running), record(succeeded)
    expect(failed).toHaveLength(15);
    expect(failed.every((e) => isFleetcronError(e.error, 'BACKEND_UNAVAILABLE'))).toBe(true);
    expect(ofType(rec.events, 'run.finished').map((e) => e.status)).toEqual(
      Array(5).fill('succeeded'),
    );
  });

  it('paused jobs are claimed but skipped fleet-wide; resume() runs them again', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore();
    const ran: number[] = [];
    const [a, b] = ['a', 'b'].map((id) => {
      const s = new Scheduler({ lock, store, clock: fake, instanceId: id });
      s.add({ name: 'job', trigger: every(1000), run: (c) => void ran.push(c.fireAt.getTime()) });
      s.start();
      return s;
    }) as [Scheduler, Scheduler];
    const start = fake.now();
    await fake.advance(2_000);
    await a.pause('job');
    expect((await store.getJobState('job')).paused).toBe(true);
    await fake.advance(3_000);
    await b.resume('job');
    await fake.advance(2_000);
    await Promise.all([a.stop(), b.stop()]);
    const history = await allHistory(store, 'job');
    const paused = history.filter((e) => e.status === 'skipped').map((e) => e.fireAt);
    expect(paused.sort((x, y) => x - y)).toEqual(firesBetween(1000, start + 2001, start + 5000));
    expect(history.filter((e) => e.status === 'skipped').every((e) => e.reason === 'paused')).toBe(
      true,
    );
    expect(ran).toEqual([start + 1000, start + 2000, start + 6000, start + 7000]);
  });

  it('pause() needs a store, not a registered job (issue 13: pause from any process)', async () => {
    const lock = new MemoryLock();
    const bare = new Scheduler({ lock });
    bare.add({ name: 'job', trigger: every(1000), run: () => {} });
    await expect(bare.pause('job')).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      field: 'store',
    });
    const store = new MemoryStore();
    const withStore = new Scheduler({ lock, store });
    await withStore.pause('elsewhere');
    expect((await store.getJobState('elsewhere')).paused).toBe(true);
    await expect(withStore.resume('')).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      field: 'name',
    });
  });

  it('failing jobs never crash: throws, rejections and non-Error values become failed runs', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore();
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), store, clock: fake });
    const bad: Record<string, (ctx: JobContext) => unknown> = {
      'sync-throw': () => {
        throw new Error('boom');
      },
      reject: async () => {
        throw new TypeError('async boom');
      },
      'throw-string': () => {
        throw 'just a string';
      },
      'reject-undefined': () => Promise.reject(undefined),
      'timed-out': (ctx) => ctx.clock.sleep(10_000, ctx.signal),
    };
    for (const [name, run] of Object.entries(bad)) {
      s.add({
        name,
        trigger: every(1000),
        run,
        middleware: name === 'timed-out' ? [timeout(200)] : [],
      });
    }
    // listeners that throw are contained too
    const unsubscribe = subscribe(() => {
      throw new Error('listener bug');
    });
    s.start();
    await fake.advance(1_500);
    unsubscribe();
    await s.stop();
    const statuses: Record<string, unknown> = {};
    for (const name of Object.keys(bad)) {
      const [e] = await allHistory(store, name);
      statuses[name] = [e?.status, typeof e?.error];
    }
    expect(statuses).toEqual({
      'sync-throw': ['failed', 'string'],
      reject: ['failed', 'string'],
      'throw-string': ['failed', 'string'],
      'reject-undefined': ['failed', 'string'],
      'timed-out': ['timed_out', 'string'],
    });
    const [str] = await allHistory(store, 'throw-string');
    expect(str!.error).toContain('just a string');
  });

  it('runs scheduler middleware, then job middleware, then the job with a full context', async () => {
    const fake = new FakeClock();
    const order: string[] = [];
    const tag =
      (name: string): Middleware =>
      async (ctx, next) => {
        order.push(`${name}>`);
        await next(ctx);
        order.push(`<${name}`);
      };
    const s = new Scheduler({
      lock: new MemoryLock({ clock: fake }),
      clock: fake,
      instanceId: 'me',
      middleware: [tag('s1'), tag('s2')],
    });
    let seen: JobContext | null = null;
    const start = fake.now();
    s.add({
      name: 'job',
      trigger: every(1000),
      middleware: [tag('j1')],
      run: (ctx) => {
        order.push('run');
        seen = ctx;
      },
    });
    s.start();
    await fake.advance(1000);
    await s.stop();
    expect(order).toEqual(['s1>', 's2>', 'j1>', 'run', '<j1', '<s2', '<s1']);
    const ctx = seen as unknown as JobContext;
    expect(ctx.job).toBe('job');
    expect(ctx.fireAt.getTime()).toBe(start + 1000);
    expect(ctx.startedAt.getTime()).toBe(start + 1000);
    expect(ctx.instanceId).toBe('me');
    expect(ctx.attempt).toBe(1);
    expect(ctx.token).toBe(1);
    expect(ctx.signal.aborted).toBe(false);
    // ctx.clock is the fleet's clock: the backend's time (here the same fake), timers of `fake`
    expect(ctx.clock.now()).toBe(fake.now());
    expect(ctx.clock.monotonic()).toBe(fake.monotonic());
    expect(typeof ctx.log.info).toBe('function');
  });
});
