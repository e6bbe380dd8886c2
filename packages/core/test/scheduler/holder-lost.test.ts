import { describe, expect, it } from 'vitest';
import {
  every,
  FakeClock,
  type HolderLostPolicy,
  type JobContext,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { allHistory } from './helpers.js';

const HOUR = 3_600_000;

/**
 * Instance `dead` claimed fire `fireAt` of `job`, recorded it `running`, and died (SIGKILL): it
 * never renews, never writes an outcome, never heartbeats. Instances `a` and `b` live on.
 */
async function deadHolder(onHolderLost: HolderLostPolicy, deadHeartbeats = false, localRunMs = 0) {
  const fake = new FakeClock(1_000);
  const lock = new MemoryLock({ clock: fake });
  const store = new MemoryStore({ clock: fake });
  const fireAt = 500;
  const claim = await lock.claim({
    ...{ key: 'job', fireAt, owner: 'dead', leaseMs: 3_000, exclusive: true },
  });
  if (claim.status !== 'won') throw new Error('setup: claim not won');
  const row = {
    ...{ id: 'row-1', job: 'job', fireAt, instanceId: 'dead', status: 'running' as const },
    ...{ attempt: 1, token: claim.lease.token, startedAt: fireAt, finishedAt: null },
    ...{ error: null, reason: null },
  };
  await store.record(row);
  if (deadHeartbeats) {
    await store.heartbeat({
      ...{ instanceId: 'dead', host: 'h', pid: 1, version: 'x', startedAt: 0, heartbeatMs: 5_000 },
      ...{ clock: null, jobs: [] },
    });
  }
  const runs: Array<{ instanceId: string; recovery: unknown; fireAt: number }> = [];
  const run = async (ctx: JobContext) => {
    runs.push({ instanceId: ctx.instanceId, recovery: ctx.recovery, fireAt: ctx.fireAt.getTime() });
    // a `trigger()` run here holds the exclusive job's lease that long
    if (ctx.requestedBy === 'local') await fake.sleep(localRunMs);
  };
  const schedulers = ['a', 'b'].map((instanceId) => {
    const s = new Scheduler({ lock, store, clock: fake, instanceId, heartbeatMs: 1_000 });
    s.add({ name: 'job', trigger: every(HOUR), onHolderLost, run });
    s.start();
    return s;
  });
  const stopAll = async () => {
    const stopping = Promise.all(schedulers.map((s) => s.stop()));
    await fake.advance(0);
    await stopping;
  };
  return { fake, store, runs, stopAll, fireAt, schedulers };
}

describe('holder lost: a fire whose holder died', () => {
  it("is recorded lease_lost once its lease expired; 'record' runs nothing more", async () => {
    const { fake, store, runs, stopAll } = await deadHolder('record');
    await fake.advance(2_000); // lease (3 s) still live: untouched
    expect((await allHistory(store, 'job')).map((r) => r.status)).toEqual(['running']);
    await fake.advance(3_000);
    const [row] = await allHistory(store, 'job');
    expect(row).toMatchObject({ id: 'row-1', status: 'lease_lost', instanceId: 'dead' });
    expect(row?.error).toContain('holder dead is gone');
    expect(runs).toEqual([]);
    await stopAll();
  });

  it("with 'rerun' runs exactly once more fleet-wide, with ctx.recovery = true", async () => {
    const { fake, store, runs, stopAll } = await deadHolder('rerun');
    await fake.advance(10_000); // many sweeps by both instances
    expect(runs).toHaveLength(1);
    expect(runs[0]?.recovery).toBe(true);
    const rows = await allHistory(store, 'job');
    expect(rows.find((r) => r.id === 'row-1')?.status).toBe('lease_lost');
    const rerun = rows.filter((r) => r.id !== 'row-1');
    expect(rerun.map((r) => [r.status, r.requestedBy])).toEqual([
      ['succeeded', 'holder-lost:1970-01-01T00:00:00.500Z'],
    ]);
    await stopAll();
  });

  it("with 'rerun' meeting a live run of the job: tried again until it runs, once", async () => {
    // `dead` stays in the registry until about 16 s: its lease expires at 4 s, so a live run
    // started at 5 s holds the job's lease (to 65 s) when the lost fire is found
    const { fake, store, runs, stopAll, schedulers } = await deadHolder('rerun', true, 60_000);
    await fake.advance(4_000);
    const live = schedulers[0]?.trigger('job');
    await fake.advance(30_000); // to 35 s: the lost fire was found, busy, tried again
    expect(runs.map((r) => r.recovery)).toEqual([false]);
    const busy = (await allHistory(store, 'job')).filter((r) =>
      r.requestedBy?.startsWith('holder'),
    );
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((r) => r.status === 'skipped' && r.reason === 'overlap')).toBe(true);
    await fake.advance(40_000); // to 75 s: the live run ended at 65 s: the next try runs it
    expect((await live)?.status).toBe('succeeded');
    expect(runs.map((r) => r.recovery)).toEqual([false, true]);
    expect(runs[1]?.fireAt).toBeGreaterThanOrEqual(65_000);
    const rows = await allHistory(store, 'job');
    const reruns = rows.filter((r) => r.requestedBy?.startsWith('holder-lost:'));
    expect(reruns.filter((r) => r.status !== 'skipped').map((r) => r.status)).toEqual([
      'succeeded',
    ]);
    await fake.advance(30_000); // no further rerun
    expect(runs).toHaveLength(2);
    await stopAll();
  });

  it('a holder still in the registry is left alone until it is gone', async () => {
    const { fake, store, stopAll } = await deadHolder('record', true);
    await fake.advance(5_000); // lease expired, but `dead` is live (gone after 3 × 5 s)
    expect((await allHistory(store, 'job')).map((r) => r.status)).toEqual(['running']);
    await fake.advance(11_000);
    expect((await allHistory(store, 'job')).map((r) => r.status)).toEqual(['lease_lost']);
    await stopAll();
  });
});

describe('holder lost, noticed at the next fire of the job', () => {
  it('the instance that claims the next fire records the lost one without waiting for a heartbeat', async () => {
    const fake = new FakeClock(1_000);
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore({ clock: fake });
    const claim = await lock.claim({
      ...{ key: 'job', fireAt: 500, owner: 'dead', leaseMs: 3_000, exclusive: false },
    });
    if (claim.status !== 'won') throw new Error('setup: claim not won');
    await store.record({
      ...{ id: 'row-1', job: 'job', fireAt: 500, instanceId: 'dead', status: 'running' },
      ...{ attempt: 1, token: claim.lease.token, startedAt: 500, finishedAt: null },
      ...{ error: null, reason: null },
    });
    const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a', heartbeatMs: 60_000 });
    s.add({ name: 'job', trigger: every(10_000), overlap: 'allow', run: () => {} });
    s.start();
    await fake.advance(8_000); // first heartbeat at start (lease still live); next one at 61 s
    expect((await allHistory(store, 'job')).map((r) => r.status)).toEqual(['running']);
    await fake.advance(1_000); // the fire at 10 s is claimed here: the job is checked
    const row = (await allHistory(store, 'job')).find((r) => r.id === 'row-1');
    expect(row?.status).toBe('lease_lost');
    const stopping = s.stop();
    await fake.advance(0);
    await stopping;
  });
});

describe('sweepHolderLost', () => {
  it('two instances noticing the same lost fire at once: one records it and re-runs it', async () => {
    const { sweepHolderLost } = await import('../../src/scheduler/fleet-control/holder-lost.js');
    const { HistoryWriter } = await import('../../src/scheduler/fire/history-writer.js');
    const { TimerQueue } = await import('../../src/scheduler/timing/timer-queue.js');
    const { validateJob } = await import('../../src/scheduler/job/job.js');
    const fake = new FakeClock(10_000);
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore({ clock: fake });
    await store.record({
      ...{ id: 'r', job: 'job', fireAt: 1_000, instanceId: 'dead', status: 'running' },
      ...{ attempt: 1, token: 7, startedAt: 1_000, finishedAt: null, error: null, reason: null },
    });
    const job = validateJob(
      { name: 'job', trigger: every(HOUR), onHolderLost: 'rerun', run: () => {} },
      {
        ...{ existing: new Set<string>(), defaultLeaseMs: 30_000 },
        ...{ capabilities: lock.capabilities, backend: lock.backend, now: fake.now() },
      },
    );
    const reruns: string[] = [];
    const sweeper = (instanceId: string) => {
      const queue = new TimerQueue(fake, () => {});
      const log = { debug() {}, info() {}, warn() {}, error() {} };
      return sweepHolderLost(
        {
          ...{ lock, store, clock: fake, queue, instanceId, log },
          history: new HistoryWriter(store, queue),
          activeFires: () => [],
          rerun: () => void reruns.push(instanceId),
        },
        [job],
        [],
      );
    };
    await Promise.all([sweeper('a'), sweeper('b')]);
    await Promise.all([sweeper('a'), sweeper('b')]); // and again later: nothing more
    expect(reruns).toHaveLength(1);
    expect((await allHistory(store, 'job')).map((r) => r.status)).toEqual(['lease_lost']);
  });
});

describe('sweepRotation', () => {
  it('hands out at most HOLDER_LOST_JOBS_PER_SWEEP jobs per sweep, every job in turn', async () => {
    const { sweepRotation, HOLDER_LOST_JOBS_PER_SWEEP: n } = await import(
      '../../src/scheduler/fleet-control/holder-lost.js'
    );
    const next = sweepRotation();
    const jobs = Array.from({ length: 2 * n + 5 }, (_, i) => i);
    const seen = [next(jobs), next(jobs), next(jobs)];
    expect(seen.every((b) => b.length === n)).toBe(true);
    expect(new Set(seen.flat()).size).toBe(jobs.length);
    expect(next([1, 2])).toEqual([1, 2]);
  });
});
