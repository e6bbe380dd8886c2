import { describe, expect, it } from 'vitest';
import {
  at,
  type Execution,
  every,
  FakeClock,
  type HistoryPage,
  type HistoryQuery,
  type Lease,
  MemoryLock,
  MemoryStore,
  type Trigger,
} from '../../src/index.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { allHistory } from './helpers.js';

const LEASE_MS = 30_000;
/** Macrotask rounds a condition may take to hold before the test fails. */
const ROUNDS = 2_000;

/** Lets real macrotasks (the release batcher's `setImmediate`) run until `done()`, bounded. */
async function until(done: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < ROUNDS; i++) {
    if (await done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`not within ${ROUNDS} rounds: ${what}`);
}

/** A MemoryStore whose next read of `running` rows runs `hook` before answering. */
class PausingStore extends MemoryStore {
  hook: (() => Promise<void>) | null = null;
  readonly writes: Execution[] = [];

  override async record(execution: Execution): Promise<void> {
    this.writes.push({ ...execution });
    await super.record(execution);
  }

  override async history(job: string, query?: HistoryQuery): Promise<HistoryPage> {
    const page = await super.history(job, query);
    const hook = this.hook;
    if (hook && query?.status === 'running') {
      this.hook = null;
      await hook();
    }
    return page;
  }
}

/** A MemoryLock that notes, at each release, what the store says of the job's rows. */
class WatchedLock extends MemoryLock {
  readonly atRelease: string[][] = [];
  constructor(
    clock: FakeClock,
    private readonly store: MemoryStore,
  ) {
    super({ clock });
  }
  override async release(lease: Lease): Promise<boolean> {
    this.atRelease.push((await allHistory(this.store, 'job')).map((r) => r.status));
    return super.release(lease);
  }
  override async releaseMany(leases: readonly Lease[]): Promise<boolean[]> {
    this.atRelease.push((await allHistory(this.store, 'job')).map((r) => r.status));
    return super.releaseMany(leases);
  }
}

/** A scheduler running one exclusive job on `trigger` (default every 10 s), lease {@link LEASE_MS}. */
function setup(trigger: Trigger = every(10_000)) {
  const fake = new FakeClock(Date.UTC(2026, 0, 1));
  const store = new PausingStore({ clock: fake });
  const lock = new WatchedLock(fake, store);
  const warnings: string[] = [];
  const logger = {
    ...{ debug() {}, info() {}, error() {} },
    warn: (message: string) => void warnings.push(message),
  };
  const s = new Scheduler({
    lock,
    store,
    clock: fake,
    instanceId: 'a',
    heartbeatMs: 1_000,
    logger,
  });
  let finish: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    finish = resolve;
  });
  s.add({ name: 'job', trigger, leaseMs: LEASE_MS, run: () => gate });
  s.start();
  const stop = async () => {
    const stopping = s.stop();
    await fake.advance(0);
    await stopping;
  };
  return { fake, store, lock, warnings, finish, stop };
}

describe('holder-lost sweep racing a run that ends', () => {
  it('a run ending between the sweep’s history read and its inspect stays succeeded', async () => {
    const { fake, store, lock, warnings, finish, stop } = setup();
    await fake.advance(10_500); // the fire at 10 s runs (held by the gate)
    expect((await allHistory(store, 'job')).map((r) => r.status)).toEqual(['running']);
    let hooked = false;
    store.hook = async () => {
      // the sweep has read the row `running`; the run ends now, completely, before the inspect
      finish();
      await until(
        async () =>
          (await lock.inspect('job')).leases.length === 0 &&
          (await allHistory(store, 'job'))[0]?.status === 'succeeded',
        'the run ended and its lease was released',
      );
      hooked = true;
    };
    await fake.advance(1_000); // the next heartbeat sweeps
    await until(async () => hooked, 'the sweep read the running row');
    await fake.advance(5_000); // more sweeps
    await stop();
    expect((await allHistory(store, 'job')).map((r) => r.status)).toEqual(['succeeded']);
    expect(store.writes.filter((w) => w.status === 'lease_lost')).toEqual([]);
    expect(warnings.filter((w) => w.includes('recorded lease_lost'))).toEqual([]);
  });

  it('the outcome is written before the lease is released', async () => {
    const { fake, store, lock, finish, stop } = setup();
    await fake.advance(10_500);
    const record = store.record.bind(store);
    // the outcome write takes 200 ms to land (the store is slow, not down)
    store.record = async (e) => {
      if (e.status !== 'running') await fake.sleep(200);
      await record(e);
    };
    finish();
    await fake.advance(100);
    expect(lock.atRelease).toEqual([]); // still waiting for the outcome
    await fake.advance(200);
    await until(async () => lock.atRelease.length > 0, 'the lease was released');
    expect(lock.atRelease).toEqual([['succeeded']]);
    await stop();
  });

  it('a store that never answers the outcome delays the release by a third of the lease only', async () => {
    // one fire, at 10 s: no next fire bounds the wait, only the third of the lease
    const { fake, store, lock, finish, stop } = setup(at(new Date(Date.UTC(2026, 0, 1, 0, 0, 10))));
    await fake.advance(10_500);
    const record = store.record.bind(store);
    store.record = (e) => (e.status === 'running' ? record(e) : new Promise<void>(() => {}));
    finish();
    await fake.flush();
    expect((await lock.inspect('job')).leases).toHaveLength(1); // waiting for the outcome
    await fake.advance(LEASE_MS / 3 - 100);
    expect((await lock.inspect('job')).leases).toHaveLength(1);
    await fake.advance(200);
    await until(async () => (await lock.inspect('job')).leases.length === 0, 'released');
    store.record = record;
    await fake.advance(LEASE_MS); // the hung try times out; the retry lands
    const first = (await allHistory(store, 'job')).at(-1);
    expect([first?.fireAt, first?.status]).toEqual([Date.UTC(2026, 0, 1, 0, 0, 10), 'succeeded']);
    await stop();
  });

  it('the next fire of the job bounds the wait: the lease is free half-way to it, so that fire is not busy', async () => {
    const { fake, store, lock, finish, stop } = setup();
    await fake.advance(10_500); // the fire at 10 s runs; the next one is at 20 s
    const record = store.record.bind(store);
    store.record = (e) => (e.status === 'running' ? record(e) : new Promise<void>(() => {}));
    finish();
    await fake.flush();
    // the outcome hangs: a third of the lease (10 s) would hold the lease up to 20.5 s, past the
    // next fire; half-way to it (15.25 s) is the bound
    await fake.advance(4_650);
    expect((await lock.inspect('job')).leases).toHaveLength(1);
    await fake.advance(200);
    await until(async () => (await lock.inspect('job')).leases.length === 0, 'released');
    store.record = record;
    await fake.advance(5_000); // the fire at 20 s
    await until(
      async () =>
        (await allHistory(store, 'job')).some((r) => r.fireAt === Date.UTC(2026, 0, 1, 0, 0, 20)),
      'the next fire was recorded',
    );
    const next = (await allHistory(store, 'job')).find(
      (r) => r.fireAt === Date.UTC(2026, 0, 1, 0, 0, 20),
    );
    expect(next?.status).toBe('succeeded');
    await fake.advance(LEASE_MS); // the hung outcome try times out; its retry lands
    await stop();
  });
});
