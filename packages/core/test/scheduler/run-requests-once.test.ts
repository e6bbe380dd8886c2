import { describe, expect, it } from 'vitest';
import {
  cron,
  FakeClock,
  type JobContext,
  MemoryLock,
  MemoryStore,
  type OverlapPolicy,
  type RunRequestDecision,
  Scheduler,
  type TakenRunRequest,
  type TakeRunRequestsOptions,
} from '../../src/index.js';
import { allHistory, Gate, settle } from './helpers.js';

/** A run seen by the job: which instance, which fire, which request. */
interface SeenRun {
  instanceId: string;
  fireAt: number;
  request: JobContext['request'];
}

/**
 * A MemoryStore whose behaviour towards one instance a test can change: its takes' replies lost
 * (the store took the requests, the instance never hears of them), its decisions held until a
 * gate opens, or a hook run when it takes.
 */
class FaultyStore extends MemoryStore {
  /** The next take of this instance: its reply is lost (once). */
  loseTakesOf: string | null = null;
  /** The next decision of this instance: held until `decisionGate` opens (once). */
  holdDecisionsOf: string | null = null;
  readonly decisionGate = new Gate();
  onTake: ((instanceId: string) => void) | null = null;

  constructor(clock: FakeClock) {
    super({ clock });
  }

  override async takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    const taken = await super.takeRunRequests(jobs, instanceId, options);
    if (taken.length > 0) this.onTake?.(instanceId);
    if (taken.length === 0 || instanceId !== this.loseTakesOf) return taken;
    this.loseTakesOf = null;
    return [];
  }

  override async decideRunRequest(
    id: string,
    takeId: string,
    decision: RunRequestDecision,
  ): Promise<boolean> {
    if (decision.instanceId === this.holdDecisionsOf) {
      this.holdDecisionsOf = null;
      await this.decisionGate.wait();
    }
    return super.decideRunRequest(id, takeId, decision);
  }
}

/**
 * A store written before exactly-once requests: no decision methods, and a take removes what it
 * returns (here: decides it at once underneath, so no take returns it again).
 */
class AtMostOnceStore extends MemoryStore {
  constructor(clock: FakeClock) {
    super({ clock });
    for (const name of ['decideRunRequest', 'releaseRunRequest', 'getRunRequest']) {
      Object.defineProperty(this, name, { value: undefined });
    }
  }

  override async takeRunRequests(jobs: readonly string[], instanceId: string) {
    const taken = await super.takeRunRequests(jobs, instanceId);
    const consume = MemoryStore.prototype.decideRunRequest;
    for (const r of taken) await consume.call(this, r.id, r.takeId, { fireAt: 0, instanceId });
    return taken.map(({ id, job, requestedBy, requestedAt, data }) => ({
      ...{ id, job, requestedBy, requestedAt, data },
    })) as TakenRunRequest[];
  }
}

const LEASE_MS = 10_000;

function fleet<S extends MemoryStore>(
  ids: string[],
  makeStore: (clock: FakeClock) => S,
  overlap: OverlapPolicy = 'skip',
  runMs = 0,
) {
  const fake = new FakeClock(); // starts on a whole minute
  const lock = new MemoryLock({ clock: fake });
  const store = makeStore(fake);
  const runs: SeenRun[] = [];
  const run = async (ctx: JobContext) => {
    runs.push({ instanceId: ctx.instanceId, fireAt: ctx.fireAt.getTime(), request: ctx.request });
    if (runMs > 0) await ctx.clock.sleep(runMs);
  };
  const schedulers = ids.map((instanceId) => {
    const scheduler = new Scheduler({
      ...{ lock, store, clock: fake, instanceId },
      runRequestLeaseMs: LEASE_MS,
      runRequestPollMs: 1_000,
    });
    scheduler.add({ name: 'job', trigger: cron('0 0 1 1 *'), run, overlap, leaseMs: 30_000 });
    return scheduler;
  });
  return { fake, store, schedulers, runs };
}

async function stopAll(fake: FakeClock, schedulers: Scheduler[]): Promise<void> {
  const stopping = Promise.all(schedulers.map((s) => s.stop()));
  await fake.advance(1_000);
  await stopping;
}

describe('fleet run requests, exactly once', () => {
  it('the run sees ctx.request { id, by, data }; the request is decided as its fire', async () => {
    const { fake, store, schedulers, runs } = fleet(
      ['a', 'b', 'c'],
      (c) => new MemoryStore({ clock: c }),
    );
    for (const s of schedulers) s.start();
    await fake.advance(1_000);
    const data = { customer: 42, report: 'monthly' };
    const request = await store.requestRun({ job: 'job', requestedBy: 'alice', data });
    await settle(fake);
    expect(runs).toHaveLength(1);
    expect(runs[0]?.request).toEqual({ id: request.id, by: 'alice', data });
    const state = await store.getRunRequest(request.id);
    expect(state).toMatchObject({ state: 'decided', takes: 1, fireAt: runs[0]?.fireAt });
    expect(state?.decidedBy).toBe(runs[0]?.instanceId);
    await fake.advance(3 * LEASE_MS); // nothing more, however long
    expect(runs).toHaveLength(1);
    await stopAll(fake, schedulers);
  });

  it('a take whose reply is lost (or whose taker died) is taken again after runRequestLeaseMs, run once', async () => {
    const { fake, store, schedulers, runs } = fleet(['a', 'b'], (c) => new FaultyStore(c));
    const [a, b] = schedulers as [Scheduler, Scheduler];
    a.start();
    await fake.advance(1_000);
    store.loseTakesOf = 'a';
    const request = await store.requestRun({ job: 'job', requestedBy: 'cli' });
    await settle(fake);
    expect(runs, 'the take of a was lost: nothing runs').toHaveLength(0);
    expect((await store.getRunRequest(request.id))?.takenBy).toBe('a');
    b.start();
    await fake.advance(LEASE_MS - 1_500);
    expect(runs, 'b does not take a held request').toHaveLength(0);
    // the lease ended; the next poll of a or b takes it (with push, polls are 10 ×
    // runRequestPollMs apart)
    await fake.advance(1_500 + 10_000);
    expect(runs).toHaveLength(1);
    expect(await store.getRunRequest(request.id)).toMatchObject({ state: 'decided', takes: 2 });
    await fake.advance(3 * LEASE_MS);
    expect(runs).toHaveLength(1);
    await stopAll(fake, schedulers);
  });

  it('a taker that stops right after its take gives the request back: another instance runs it at once', async () => {
    const { fake, store, schedulers, runs } = fleet(['a', 'b'], (c) => new FaultyStore(c));
    const [a, b] = schedulers as [Scheduler, Scheduler];
    a.start();
    await fake.advance(1_000);
    let stopping: Promise<void> | null = null;
    store.onTake = (instanceId) => {
      if (instanceId === 'a' && !stopping) stopping = a.stop();
    };
    const request = await store.requestRun({ job: 'job', requestedBy: 'cli' });
    await settle(fake);
    await fake.advance(1_000);
    await stopping;
    expect(runs).toHaveLength(0);
    expect((await store.getRunRequest(request.id))?.state, 'given back').toBe('pending');
    store.onTake = null;
    b.start();
    await settle(fake);
    expect(
      runs.map((r) => r.instanceId),
      'taken at b start, before any lease ended',
    ).toEqual(['b']);
    await stopAll(fake, schedulers);
  });

  it('a take replaced while its fire waits for the decision neither runs nor records', async () => {
    const { fake, store, schedulers, runs } = fleet(
      ['a', 'b'],
      (c) => new FaultyStore(c),
      'allow', // so b's fire is not answered busy by a's held lease
    );
    const [a, b] = schedulers as [Scheduler, Scheduler];
    store.holdDecisionsOf = 'a';
    a.start();
    await fake.advance(1_000);
    const request = await store.requestRun({ job: 'job', requestedBy: 'cli' });
    await settle(fake);
    expect(store.decisionGate.waiting, "a's fire won its claim and waits for the decision").toBe(1);
    const aFire = (await store.getRunRequest(request.id))?.takenBy;
    expect(aFire).toBe('a');
    b.start();
    // a frozen past its take lease: b's next poll takes it, decides, runs
    await fake.advance(LEASE_MS + 11_000);
    expect(runs.map((r) => r.instanceId)).toEqual(['b']);
    store.decisionGate.open(); // a's decision arrives: refused
    await settle(fake);
    await fake.advance(1_000);
    expect(
      runs.map((r) => r.instanceId),
      'a never runs it',
    ).toEqual(['b']);
    const rows = await allHistory(store, 'job');
    expect(
      rows.map((r) => [r.instanceId, r.status]),
      'one row, b’s',
    ).toEqual([['b', 'succeeded']]);
    expect(await store.getRunRequest(request.id)).toMatchObject({ decidedBy: 'b', takes: 2 });
    await stopAll(fake, schedulers);
  });

  it('a request while the exclusive job runs is decided once, as its skipped/overlap row', async () => {
    const { fake, store, schedulers, runs } = fleet(
      ['a', 'b'],
      (c) => new MemoryStore({ clock: c }),
      'skip',
      60_000,
    );
    for (const s of schedulers) s.start();
    await fake.advance(1_000);
    const [a] = schedulers as [Scheduler];
    const running = a.trigger('job', { by: 'local' }); // holds the job's lease for a minute
    await settle(fake);
    const request = await store.requestRun({ job: 'job', requestedBy: 'cli' });
    await settle(fake);
    const state = await store.getRunRequest(request.id);
    expect(state?.state).toBe('decided');
    const skipped = (await allHistory(store, 'job')).filter((r) => r.requestedBy === 'cli');
    expect(skipped.map((r) => [r.status, r.reason, r.fireAt])).toEqual([
      ['skipped', 'overlap', state?.fireAt],
    ]);
    await fake.advance(60_000);
    await running;
    expect(
      runs.map((r) => r.request?.by ?? null),
      'the request never ran',
    ).toEqual([null]);
    await stopAll(fake, schedulers);
  });

  it('a store without decisions still runs a request once (taken = removed), with ctx.request', async () => {
    const { fake, store, schedulers, runs } = fleet(['a', 'b'], (c) => new AtMostOnceStore(c));
    for (const s of schedulers) s.start();
    await fake.advance(1_000);
    const request = await store.requestRun({ job: 'job', requestedBy: 'cli', data: [1, 2] });
    await settle(fake);
    await fake.advance(3 * LEASE_MS);
    expect(runs.map((r) => r.request)).toEqual([{ id: request.id, by: 'cli', data: [1, 2] }]);
    await stopAll(fake, schedulers);
  });

  it('runRequestLeaseMs must be a positive number of ms', () => {
    const lock = new MemoryLock();
    expect(() => new Scheduler({ lock, runRequestLeaseMs: 0 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', field: 'runRequestLeaseMs' }),
    );
  });
});
