import { describe, expect, it } from 'vitest';
import {
  cron,
  every,
  FakeClock,
  isFleetcronError,
  type JobContext,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { allHistory } from './helpers.js';

/** A MemoryStore without push: run requests must be polled. */
class PollOnlyStore extends MemoryStore {
  constructor(clock: FakeClock) {
    super({ clock });
    Object.defineProperty(this, 'watchRunRequests', { value: undefined });
  }
}

function setup(ids: string[], makeStore = (clock: FakeClock) => new MemoryStore({ clock })) {
  const fake = new FakeClock(); // starts on a whole minute
  const lock = new MemoryLock({ clock: fake });
  const s = makeStore(fake);
  const runs: Array<{ instanceId: string; fireAt: number; requestedBy: unknown }> = [];
  const run = (ctx: JobContext) =>
    void runs.push({
      instanceId: ctx.instanceId,
      fireAt: ctx.fireAt.getTime(),
      requestedBy: ctx.requestedBy,
    });
  const schedulers = ids.map((instanceId) => {
    const scheduler = new Scheduler({ lock, store: s, clock: fake, instanceId });
    scheduler.add({ name: 'job', trigger: cron('* * * * *'), run });
    return scheduler;
  });
  return { fake, lock, store: s, schedulers, runs };
}

async function stopAll(fake: FakeClock, schedulers: Scheduler[]): Promise<void> {
  const stopping = Promise.all(schedulers.map((s) => s.stop()));
  await fake.advance(0);
  await stopping;
}

describe('run now: scheduler.trigger()', () => {
  it('runs a manual fire here now, never on a scheduled fire time, recorded with requestedBy', async () => {
    const { fake, store, schedulers, runs } = setup(['a']);
    const [s] = schedulers as [Scheduler];
    s.start();
    const minute = fake.now(); // a fire time of the job's trigger
    const outcome = await s.trigger('job', { by: 'alice' });
    expect(outcome).toMatchObject({ job: 'job', status: 'succeeded', requestedBy: 'alice' });
    expect(outcome.fireAt).toBe(minute + 1); // moved off the scheduled fire
    const again = await s.trigger('job');
    expect(again.fireAt).toBe(minute + 2); // each manual fire its own identity
    expect(runs).toEqual([
      { instanceId: 'a', fireAt: minute + 1, requestedBy: 'alice' },
      { instanceId: 'a', fireAt: minute + 2, requestedBy: 'local' },
    ]);
    const rows = await allHistory(store, 'job');
    expect(rows.map((r) => [r.fireAt, r.status, r.requestedBy]).sort()).toEqual([
      [minute + 1, 'succeeded', 'alice'],
      [minute + 2, 'succeeded', 'local'],
    ]);
    await fake.advance(60_000); // the scheduled fire still runs, as a scheduled fire
    expect(runs.at(-1)).toEqual({ instanceId: 'a', fireAt: minute + 60_000, requestedBy: null });
    await stopAll(fake, schedulers);
  });

  it('obeys the overlap rule: busy while a run holds the exclusive lease', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), store, clock: fake });
    s.add({ name: 'slow', trigger: every(60_000), run: (ctx) => ctx.clock.sleep(10_000) });
    s.start();
    await fake.advance(60_000); // the scheduled run holds the lease for 10 s
    const outcome = await s.trigger('slow', { by: 'bob' });
    expect(outcome).toMatchObject({ status: 'skipped', reason: 'overlap' });
    await fake.advance(10_000);
    const later = s.trigger('slow', { by: 'bob' });
    await fake.advance(10_000);
    expect(await later).toMatchObject({ status: 'succeeded' });
    await stopAll(fake, [s]);
  });

  it('unknown job: UNKNOWN_JOB; not running: SchedulerStoppedError', async () => {
    const { schedulers } = setup(['a']);
    const [s] = schedulers as [Scheduler];
    await expect(s.trigger('job')).rejects.toSatisfy((e) =>
      isFleetcronError(e, 'SCHEDULER_STOPPED'),
    );
    s.start();
    await expect(s.trigger('nope')).rejects.toSatisfy((e) => isFleetcronError(e, 'UNKNOWN_JOB'));
    await expect(s.trigger('nope')).rejects.toMatchObject({
      name: 'UnknownJobError',
      job: 'nope',
      field: 'name',
    });
    await s.stop();
  });
});

describe('fleet run requests', () => {
  it('a request from a process that registers no job runs exactly once on a fleet of 3 (push)', async () => {
    const { fake, store, schedulers, runs } = setup(['a', 'b', 'c']);
    for (const s of schedulers) s.start();
    await fake.advance(1_000);
    const request = await store.requestRun({ job: 'job', requestedBy: 'cli' });
    await fake.advance(0); // push: no poll interval needed
    expect(runs).toHaveLength(1);
    await fake.advance(20_000); // and nothing more later
    expect(runs).toHaveLength(1);
    expect(runs[0]?.requestedBy).toBe('cli');
    const rows = (await allHistory(store, 'job')).filter((r) => r.requestedBy === 'cli');
    expect(rows.map((r) => r.status)).toEqual(['succeeded']);
    expect(rows[0]?.fireAt).toBeGreaterThanOrEqual(request.requestedAt);
    await stopAll(fake, schedulers);
  });

  it('without push, requests are polled: picked up within runRequestPollMs', async () => {
    const { fake: fake0, store, schedulers, runs } = setup(['a', 'b'], (c) => new PollOnlyStore(c));
    for (const s of schedulers) s.start();
    await fake0.advance(100);
    await store.requestRun({ job: 'job', requestedBy: 'cron-admin' });
    await fake0.advance(500);
    expect(runs).toHaveLength(0); // not yet polled
    await fake0.advance(500);
    expect(runs.map((r) => r.requestedBy)).toEqual(['cron-admin']);
    await stopAll(fake0, schedulers);
  });
});

describe('pause/resume from any process', () => {
  it('a scheduler that does not register the job pauses it fleet-wide; without a store: typed error', async () => {
    const { fake, store, schedulers, runs } = setup(['a']);
    const admin = new Scheduler({ lock: new MemoryLock({ clock: fake }), store, clock: fake });
    const [s] = schedulers as [Scheduler];
    s.start();
    await admin.pause('job', { by: 'ops' });
    expect(await store.getJobState('job')).toMatchObject({ paused: true, pausedBy: 'ops' });
    await fake.advance(60_000);
    expect(runs).toHaveLength(0);
    await admin.resume('job');
    await fake.advance(60_000);
    expect(runs).toHaveLength(1);
    const bare = new Scheduler({ lock: new MemoryLock() });
    await expect(bare.pause('job')).rejects.toSatisfy(
      (e) => isFleetcronError(e, 'INVALID_OPTION') && (e as { field?: string }).field === 'store',
    );
    await stopAll(fake, [s]);
  });
});
