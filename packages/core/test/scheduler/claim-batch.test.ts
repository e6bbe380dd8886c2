import { describe, expect, it } from 'vitest';
import {
  at,
  BackendUnavailableError,
  every,
  FakeClock,
  isFleetcronError,
  MemoryLock,
  MemoryStore,
  offsetClock,
  Scheduler,
  subscribe,
} from '../../src/index.js';
import { BatchLock } from './batch-lock.js';
import { allHistory, FlakyLock, recordEvents, settle } from './helpers.js';

const MIN = 60_000;

function fleet(options: { claimBatchSize?: number; jobs?: number; leaseMs?: number } = {}) {
  const fake = new FakeClock();
  const memory = new MemoryLock({ clock: fake });
  const lock = new BatchLock(memory);
  const store = new MemoryStore({ clock: fake });
  const s = new Scheduler({
    ...{ lock, store, clock: fake, instanceId: 'a' },
    ...(options.claimBatchSize ? { claimBatchSize: options.claimBatchSize } : {}),
  });
  const runs = new Map<string, number>();
  for (let i = 0; i < (options.jobs ?? 0); i++) {
    s.add({
      name: `job-${i}`,
      trigger: every(MIN),
      leaseMs: options.leaseMs ?? 30_000,
      run: (ctx) => void runs.set(ctx.job, (runs.get(ctx.job) ?? 0) + 1),
    });
  }
  const nextMinute = Math.ceil((fake.now() + 1) / MIN) * MIN;
  const stop = async () => {
    const stopping = s.stop({ drainMs: 1000 });
    await fake.advance(5_000);
    await stopping;
  };
  return { fake, memory, lock, store, s, runs, nextMinute, stop };
}

describe('batched claims: fires due on one timer wake are claimed together', () => {
  it('1,000 jobs due on one wake: ceil(1000 / claimBatchSize) claimMany calls, each fire run once', async () => {
    const t = fleet({ jobs: 1000, claimBatchSize: 64 });
    t.s.start();
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    expect(t.lock.claimBatches.map((b) => b.requests.length)).toEqual([
      ...Array(15).fill(64),
      1000 - 15 * 64,
    ]);
    expect(t.lock.singleClaims).toBe(0);
    expect(t.runs.size).toBe(1000);
    expect([...t.runs.values()].every((n) => n === 1)).toBe(true);
    // every fire of the wake is in exactly one batch
    const keys = t.lock.claimBatches.flatMap((b) => b.requests.map((r) => r.key));
    expect(new Set(keys).size).toBe(1000);
    // the jobs ended together: their releases went out batched too
    expect(t.lock.releaseBatches.map((b) => b.length)).toEqual([
      ...Array(15).fill(64),
      1000 - 15 * 64,
    ]);
    expect(t.lock.singleReleases).toBe(0);
    await t.stop();
  }, 30_000);

  it('uses the default batch size (256) and never more than the lock’s maxBatch', async () => {
    const t = fleet({ jobs: 600 });
    t.s.start();
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    expect(t.lock.claimBatches.map((b) => b.requests.length)).toEqual([256, 256, 88]);
    await t.stop();

    const fake = new FakeClock();
    const small = new BatchLock(new MemoryLock({ clock: fake }));
    Object.defineProperty(small, 'capabilities', {
      value: { ...small.inner.capabilities, maxBatch: 7 },
    });
    const s = new Scheduler({ lock: small, clock: fake, instanceId: 'a', claimBatchSize: 100 });
    for (let i = 0; i < 20; i++) s.add({ name: `j${i}`, trigger: every(MIN), run: () => {} });
    s.start();
    await fake.advanceTo(Math.ceil((fake.now() + 1) / MIN) * MIN);
    await settle(fake);
    expect(small.claimBatches.map((b) => b.requests.length)).toEqual([7, 7, 6]);
    await s.stop();
  }, 30_000);

  it('a lock without claimMany gets single claims, at most maxConcurrentClaims in flight', async () => {
    const fake = new FakeClock();
    const lock = new FlakyLock(new MemoryLock({ clock: fake })); // claim/extend/release only
    let inFlight = 0;
    let maxInFlight = 0;
    const claim = lock.claim.bind(lock);
    lock.claim = async (request) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await fake.flush(); // the answer takes a few macrotasks
      inFlight--;
      return claim(request);
    };
    const s = new Scheduler({ lock, clock: fake, instanceId: 'a', maxConcurrentClaims: 4 });
    const ran = new Set<string>();
    for (let i = 0; i < 40; i++) {
      s.add({ name: `job-${i}`, trigger: every(MIN), run: (ctx) => void ran.add(ctx.job) });
    }
    s.start();
    await fake.advanceTo(Math.ceil((fake.now() + 1) / MIN) * MIN);
    for (let i = 0; i < 100 && ran.size < 40; i++) await fake.flush();
    expect(ran.size).toBe(40);
    expect(lock.claims).toBe(40);
    expect(maxInFlight).toBe(4);
    await s.stop();
  });

  it('a lock with claimMany but no maxBatch is sent single claims', async () => {
    const fake = new FakeClock();
    const lock = new BatchLock(new MemoryLock({ clock: fake }));
    const { maxBatch: _, ...caps } = lock.inner.capabilities;
    Object.defineProperty(lock, 'capabilities', { value: caps });
    const s = new Scheduler({ lock, clock: fake, instanceId: 'a' });
    for (let i = 0; i < 5; i++) s.add({ name: `j${i}`, trigger: every(MIN), run: () => {} });
    s.start();
    await fake.advanceTo(Math.ceil((fake.now() + 1) / MIN) * MIN);
    await settle(fake);
    expect(lock.claimBatches).toEqual([]);
    expect(lock.singleClaims).toBe(5);
    await s.stop();
  });

  it('a batch answered after its members’ lease deadline: wins withdrawn, recorded lease_expired, not run', async () => {
    // lease 3000: local deadline 2700 ms after the BATCH was sent; give-up bound 3000 ms
    const t = fleet({ jobs: 3, leaseMs: 3000 });
    t.lock.holdClaims = true;
    t.s.start();
    await t.fake.advanceTo(t.nextMinute);
    expect(t.lock.claimBatches).toHaveLength(1);
    expect(t.lock.claimGate.waiting).toBe(1);
    t.fake.freeze(2_800); // a frozen process: past the deadline, before the give-up bound
    t.lock.claimGate.open();
    await settle(t.fake);
    expect(t.runs.size).toBe(0);
    expect(t.lock.withdrawn).toBe(3);
    for (let i = 0; i < 3; i++) {
      const rows = await allHistory(t.store, `job-${i}`);
      expect(rows.map((r) => [r.status, r.reason])).toEqual([['skipped', 'lease_expired']]);
      // the fire is not burnt: another instance can still claim it
      const b = await t.memory.claim({
        ...{ key: `job-${i}`, fireAt: t.nextMinute, owner: 'b' },
        ...{ leaseMs: 3000, exclusive: true },
      });
      expect(b.status).toBe('won');
    }
    await t.stop();
  });

  it('a batch with no answer within the lease: every member fails closed, the late wins are handed back', async () => {
    const t = fleet({ jobs: 2, leaseMs: 3000 });
    t.lock.holdClaims = true;
    t.s.start();
    await t.fake.advanceTo(t.nextMinute);
    await t.fake.advance(3_100); // the give-up bound (the lease) passes with no answer
    await settle(t.fake);
    expect(t.lock.claimBatches[0]?.signal?.aborted).toBe(true); // every member gave up
    t.lock.claimGate.open(); // the backend's answer arrives late: both won
    await settle(t.fake);
    expect(t.runs.size).toBe(0);
    expect(t.lock.withdrawn).toBe(2);
    const rows = await allHistory(t.store, 'job-0');
    expect(rows.map((r) => [r.status, r.reason])).toEqual([['skipped', 'backend_unavailable']]);
    expect((await t.memory.inspect('job-0')).fires).toEqual([]);
    await t.stop();
  });

  it('fires queued for a batch when stop() begins are not sent', async () => {
    const t = fleet({ jobs: 10 });
    t.s.start();
    let stopping: Promise<void> | null = null;
    let scheduled = 0;
    // stop() during the timer wake, after every fire was launched and queued for its batch (the
    // wake publishes fire.scheduled for each job's next fire just before launching the due one)
    const unsubscribe = subscribe((e) => {
      if (e.type !== 'fire.scheduled' || e.fireAt !== t.nextMinute + MIN) return;
      if (++scheduled === 10) stopping = t.s.stop({ drainMs: 0 });
    });
    await t.fake.advanceTo(t.nextMinute);
    unsubscribe();
    await settle(t.fake);
    expect(stopping).not.toBeNull();
    await t.fake.advance(5_000);
    await stopping;
    expect(t.lock.claimBatches).toEqual([]);
    expect(t.lock.singleClaims).toBe(0);
    expect(t.runs.size).toBe(0);
    expect((await t.memory.inspect('job-0')).fires).toEqual([]);
  });

  it('mixed won / busy / lost / early answers in one batch are each handled as single answers', async () => {
    const t = fleet();
    const rec = recordEvents();
    const ran: string[] = [];
    for (const name of ['won', 'busy', 'lost', 'early']) {
      t.s.add({ name, trigger: at(t.nextMinute), run: (ctx) => void ran.push(ctx.job) });
    }
    const claimFor = (key: string, fireAt: number) =>
      t.memory.claim({ key, fireAt, owner: 'b', leaseMs: 10 * MIN, exclusive: true });
    await t.fake.advanceTo(t.nextMinute - 10_000);
    expect((await claimFor('busy', t.nextMinute - 10_000)).status).toBe('won'); // b runs `busy`
    t.s.start();
    await t.fake.advanceTo(t.nextMinute - 100);
    expect((await claimFor('lost', t.nextMinute)).status).toBe('won'); // b took `lost` first
    t.lock.refuseEarly.add('early'); // the backend refuses `early` once
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    await t.fake.advance(1_000); // the early refusal is claimed again
    await settle(t.fake);
    rec.stop();
    const first = t.lock.claimBatches[0]?.requests.map((r) => r.key).sort();
    expect(first).toEqual(['busy', 'early', 'lost', 'won']);
    expect(t.lock.claimBatches[1]?.requests.map((r) => r.key)).toEqual(['early']);
    expect(ran.sort()).toEqual(['early', 'won']);
    const rowsOf = async (job: string) =>
      (await allHistory(t.store, job)).map((r) => [r.status, r.reason ?? null]);
    expect(await rowsOf('busy')).toEqual([['skipped', 'overlap']]);
    expect(await rowsOf('lost')).toEqual([]);
    expect(await rowsOf('won')).toEqual([['succeeded', null]]);
    expect(await rowsOf('early')).toEqual([['succeeded', null]]);
    const claims = rec.events
      .filter((e) => e.type.startsWith('claim.') && e.instanceId === 'a')
      .map((e) => `${e.job}:${e.type}${e.type === 'claim.lost' ? `/${e.reason}` : ''}`);
    expect(claims.sort()).toEqual([
      'busy:claim.busy',
      'early:claim.lost/early',
      'early:claim.won',
      'lost:claim.lost/claimed',
      'won:claim.won',
    ]);
    await t.stop();
  });

  it('a claimMany that throws fails every member closed (skipped backend_unavailable), no crash', async () => {
    const t = fleet({ jobs: 3 });
    t.lock.failClaims = new BackendUnavailableError('memory', 'claimMany');
    t.s.start();
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    expect(t.runs.size).toBe(0);
    const rows = await allHistory(t.store, 'job-2');
    expect(rows.map((r) => [r.status, r.reason])).toEqual([['skipped', 'backend_unavailable']]);
    t.lock.failClaims = null; // claims resume by themselves
    await t.fake.advance(MIN);
    await settle(t.fake);
    expect(t.runs.size).toBe(3);
    await t.stop();
  });

  it('renewals of leases won together go out together (extendMany)', async () => {
    const t = fleet({ leaseMs: 3000 });
    const open: Array<() => void> = [];
    for (let i = 0; i < 5; i++) {
      t.s.add({
        name: `long-${i}`,
        trigger: at(t.nextMinute),
        leaseMs: 3000,
        run: () => new Promise<void>((resolve) => open.push(resolve)),
      });
    }
    t.s.start();
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    expect(open).toHaveLength(5);
    await t.fake.advance(2_500); // renewals every 1000 ms
    expect(t.lock.extendBatches.map((b) => b.length)).toEqual([5, 5]);
    expect(t.lock.singleExtends).toBe(0);
    for (const resolve of open) resolve();
    await settle(t.fake);
    const rows = await allHistory(t.store, 'long-0');
    expect(rows.map((r) => r.status)).toEqual(['succeeded']);
    expect(t.lock.releaseBatches.map((b) => b.length)).toEqual([5]);
    await t.stop();
  });

  it('catch-up claims at start() go through the batch: the first claims of every job in one call', async () => {
    const t = fleet();
    for (let i = 0; i < 4; i++) {
      t.s.add({ name: `c${i}`, trigger: every(MIN), catchUp: 'latest', run: () => {} });
    }
    t.s.start();
    await t.fake.advanceTo(t.nextMinute);
    await settle(t.fake);
    const stopping = t.s.stop();
    await t.fake.advance(0);
    await stopping;
    await t.fake.advance(5.5 * MIN); // the whole fleet (this instance) is down
    t.lock.claimBatches.length = 0;
    t.s.start();
    await settle(t.fake, 20);
    const catchUps = t.lock.claimBatches.filter((b) => b.requests.some((r) => r.catchUp));
    expect(catchUps.map((b) => b.requests.length)).toEqual([4]);
    await t.stop();
  });

  it("the backend time of batch answers feeds the fleet clock: a clock 3 s fast starts fires on the backend's time", async () => {
    const fake = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 500));
    const lock = new BatchLock(new MemoryLock({ clock: fake }));
    const s = new Scheduler({ lock, clock: offsetClock(fake, 3000), instanceId: 'fast' });
    const starts: number[] = [];
    s.add({
      name: 'tick',
      trigger: every(1000),
      run: (ctx) => void starts.push(fake.now() - ctx.fireAt.getTime()),
    });
    expect(s.clockOffset()).toBeNull();
    s.start();
    await fake.advance(5_000);
    await settle(fake);
    const offset = s.clockOffset();
    expect(lock.claimBatches.length).toBeGreaterThan(0);
    expect(lock.singleClaims).toBe(0);
    expect(offset?.offsetMs).toBeGreaterThanOrEqual(-3000 - (offset?.boundMs ?? 0) - 1);
    expect(offset?.offsetMs).toBeLessThanOrEqual(-3000 + (offset?.boundMs ?? 0) + 1);
    // every fire started at (not before) its time by the backend's clock
    expect(starts.length).toBeGreaterThan(0);
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(0);
    const stopping = s.stop();
    await fake.advance(0);
    await stopping;
  });

  it('rejects a claimBatchSize that is not a positive integer, naming the field', () => {
    const lock = new MemoryLock();
    for (const claimBatchSize of [0, -1, 2.5, Number.NaN]) {
      let error: unknown;
      try {
        new Scheduler({ lock, claimBatchSize });
      } catch (e) {
        error = e;
      }
      expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
      expect((error as { field?: string }).field).toBe('claimBatchSize');
    }
  });
});
