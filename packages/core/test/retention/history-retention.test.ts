import { describe, expect, it } from 'vitest';
import {
  type Execution,
  FakeClock,
  type FleetcronEvent,
  historyRetention,
  isFleetcronError,
  type JobContext,
  MemoryLock,
  MemoryStore,
  type PruneJobOptions,
  type RetentionReport,
  Scheduler,
  type Store,
  silentLogger,
} from '../../src/index.js';
import { allHistory, recordEvents, stopOnFakeClock } from '../scheduler/helpers.js';

const HOUR = 3_600_000;
const JOBS = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];

/** A finished (or running) execution of `job` that started `hoursAgo` before `now`. */
function row(job: string, now: number, hoursAgo: number, status: Execution['status']): Execution {
  const startedAt = now - hoursAgo * HOUR;
  return {
    ...{ id: `${job}-${hoursAgo}`, job, fireAt: startedAt, status, attempt: 1 },
    ...{ instanceId: 'seed', token: 1, startedAt, error: null, reason: null },
    finishedAt: status === 'running' ? null : startedAt + 10,
  };
}

/** 30 hourly executions per job (0 to 29 hours old); `alpha` also has a 40-hour-old running one. */
async function seed(store: Store, now: number): Promise<void> {
  for (const job of JOBS) {
    for (let h = 29; h >= 0; h--) await store.record(row(job, now, h, 'succeeded'));
  }
  await store.record(row('alpha', now, 40, 'running'));
}

/** A MemoryStore that logs each pruneJob call and can abort a signal after the n-th. */
class WatchedStore extends MemoryStore {
  calls: Array<{ job: string; limit: number }> = [];
  abortAfter: { calls: number; controller: AbortController } | null = null;
  override async pruneJob(job: string, options: PruneJobOptions): Promise<number> {
    const deleted = await super.pruneJob(job, options);
    this.calls.push({ job, limit: options.limit });
    if (this.abortAfter && this.calls.length >= this.abortAfter.calls) {
      this.abortAfter.controller.abort(new Error('lease lost'));
    }
    return deleted;
  }
}

/** The context a scheduler would give one run (enough for the retention job). */
function contextAt(fake: FakeClock, signal: AbortSignal): JobContext {
  return {
    ...{ job: 'fleetcron.history-retention', fireAt: new Date(fake.now()), attempt: 1 },
    ...{ startedAt: new Date(fake.now()), instanceId: 'solo', token: 1, signal },
    ...{ log: silentLogger, clock: fake, requestedBy: null, recovery: false, shard: null },
    lease: { token: 1, remainingMs: () => 60_000, assertValid: () => {} },
  };
}

describe('historyRetention', () => {
  it('a fleet of two keeps every job within keepLast and maxAgeMs, rowsPerRun per fire, once per fire', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore({ clock: fake });
    const now = fake.now();
    await seed(store, now);
    const reports: RetentionReport[] = [];
    const { events, stop } = recordEvents();
    // keepLast 20 and 10 hours: the age bound is the tighter one (10 rows per job stay), so 100
    // rows must go, 25 per run: four runs of 25, then runs that find nothing.
    const fleet = ['a', 'b'].map((instanceId) => {
      const scheduler = new Scheduler({ lock, store, clock: fake, instanceId });
      scheduler.add(
        historyRetention({
          store,
          keepLast: 20,
          maxAgeMs: 10 * HOUR,
          every: 60_000,
          rowsPerRun: 25,
          rowsPerCall: 10,
          onReport: (report) => reports.push(report),
        }),
      );
      return scheduler;
    });
    for (const scheduler of fleet) scheduler.start();
    await fake.advance(6 * 60_000 + 500);
    for (const scheduler of fleet) await stopOnFakeClock(scheduler, fake);
    stop();

    const runs = await allHistory(store, 'fleetcron.history-retention');
    expect(
      runs.map((e) => e.status),
      'one succeeded run per fire, fleet-wide',
    ).toEqual(Array(6).fill('succeeded'));
    expect(new Set(runs.map((e) => e.fireAt)).size).toBe(6);
    expect(
      reports.map((r) => r.deleted),
      'at most rowsPerRun per run',
    ).toEqual([25, 25, 25, 25, 0, 0]);
    expect(reports.map((r) => r.stoppedBy)).toEqual([
      'budget',
      'budget',
      'budget',
      'budget',
      'done',
      'done',
    ]);
    for (const job of JOBS) {
      const left = await allHistory(store, job);
      const finished = left.filter((e) => e.status !== 'running');
      expect(finished.length, `${job}: within the age bound`).toBe(10);
      const oldestStart = Math.min(...finished.map((e) => e.startedAt));
      expect(oldestStart, `${job}: nothing older than maxAgeMs at the last run`).toBeGreaterThan(
        now - 10 * HOUR,
      );
    }
    expect(
      (await allHistory(store, 'alpha')).some((e) => e.status === 'running'),
      'a running row is never pruned',
    ).toBe(true);
    const pruned = events.filter(
      (e): e is Extract<FleetcronEvent, { type: 'history.pruned' }> => e.type === 'history.pruned',
    );
    expect(pruned.map((e) => e.deleted)).toEqual([25, 25, 25, 25, 0, 0]);
    expect(pruned.every((e) => e.job === 'fleetcron.history-retention')).toBe(true);
  });

  it('keepLast alone bounds by count; jobs within the bound are untouched', async () => {
    const fake = new FakeClock();
    const store = new MemoryStore({ clock: fake });
    await seed(store, fake.now());
    for (let h = 0; h < 3; h++) await store.record(row('small', fake.now(), h, 'failed'));
    const job = historyRetention({ store, keepLast: 12, maxAgeMs: null });
    await job.run(contextAt(fake, new AbortController().signal));
    for (const name of JOBS) {
      const kept = await allHistory(store, name);
      expect(kept.filter((e) => e.status !== 'running').map((e) => e.id)).toEqual(
        Array.from({ length: 12 }, (_, h) => `${name}-${h}`),
      );
    }
    expect(await allHistory(store, 'small')).toHaveLength(3);
  });

  it('stops when ctx.signal aborts, and the next run resumes at the job it stopped in', async () => {
    const fake = new FakeClock();
    const store = new WatchedStore({ clock: fake });
    await seed(store, fake.now());
    const reports: RetentionReport[] = [];
    const job = historyRetention({
      store,
      keepLast: 5,
      maxAgeMs: null,
      rowsPerCall: 10,
      onReport: (r) => reports.push(r),
    });
    const first = new AbortController();
    store.abortAfter = { calls: 4, controller: first }; // alpha: 10, 10, 5; bravo: 10, abort
    await job.run(contextAt(fake, first.signal));
    expect(reports[0]).toMatchObject({ stoppedBy: 'signal', resumeAt: 'bravo', deleted: 35 });
    expect(store.calls).toHaveLength(4);

    store.abortAfter = null;
    store.calls = [];
    await job.run(contextAt(fake, new AbortController().signal));
    expect(store.calls[0]?.job, 'resumes in bravo').toBe('bravo');
    expect(reports[1]).toMatchObject({ stoppedBy: 'done', resumeAt: null });
    expect(reports[1]?.deletedByJob).toEqual({ bravo: 15, charlie: 25, delta: 25, echo: 25 });
    expect(new Set(store.calls.map((c) => c.job)), 'then wraps round to alpha').toContain('alpha');
    for (const name of JOBS) {
      const finished = (await allHistory(store, name)).filter((e) => e.status !== 'running');
      expect(finished, name).toHaveLength(5);
    }
  });

  it('refuses bad options with typed errors naming the field', () => {
    const store = new MemoryStore();
    const bare: Store = {
      backend: 'bare',
      record: async () => {},
      history: async () => ({ executions: [], nextCursor: null }),
      prune: async () => 0,
      getJobState: async (job) => ({
        ...{ job, paused: false, lastStatus: null, lastFireAt: null, lastFinishedAt: null },
      }),
      setPaused: async () => {},
    };
    const cases: Array<[Parameters<typeof historyRetention>[0], string]> = [
      [{ store: bare }, 'store'],
      [{ store, keepLast: 0 }, 'keepLast'],
      [{ store, keepLast: 1.5 }, 'keepLast'],
      [{ store, keepLast: null, maxAgeMs: null }, 'keepLast'],
      [{ store, maxAgeMs: 0 }, 'maxAgeMs'],
      [{ store, rowsPerRun: 0 }, 'rowsPerRun'],
      [{ store, rowsPerCall: 10_001 }, 'rowsPerCall'],
      [{ store, every: -5 }, 'every'],
      [{ store, name: '' }, 'name'],
    ];
    for (const [options, field] of cases) {
      let error: unknown = null;
      try {
        historyRetention(options);
      } catch (e) {
        error = e;
      }
      expect(
        isFleetcronError(error, 'INVALID_OPTION') && error.field === field,
        `${JSON.stringify({ ...options, store: options.store.backend })}: ${String(error)}`,
      ).toBe(true);
    }
  });
});
