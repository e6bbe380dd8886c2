import { describe, expect, it } from 'vitest';
import {
  at,
  every,
  FakeClock,
  isFleetcronError,
  type Lease,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { abortMarginMs } from '../../src/scheduler/timing/deadline.js';
import { allHistory, type ExtendMode, FlakyLock, recordEvents } from './helpers.js';

describe('lease renewal and loss (Guarantee 4)', () => {
  it('renews every third of the lease while the job runs', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const rec = recordEvents();
    const s = new Scheduler({ lock, clock: fake, instanceId: 'a' });
    const start = fake.now();
    let finished = false;
    s.add({
      name: 'long',
      trigger: at(start + 1000),
      leaseMs: 3000,
      run: async (ctx) => {
        await ctx.clock.sleep(10_000, ctx.signal);
        finished = true;
      },
    });
    s.start();
    await fake.advance(12_000);
    rec.stop();
    expect(finished).toBe(true);
    const renewed = rec.events.filter((e) => e.type === 'lease.renewed' && e.instanceId === 'a');
    // 10 s of run, renewal every 1 s
    expect(renewed.length).toBeGreaterThanOrEqual(9);
    expect(rec.events.some((e) => e.type === 'lease.lost')).toBe(false);
    expect((await lock.inspect('long')).leases).toEqual([]); // released
    await s.stop();
  });

  it.each<ExtendMode>(['null', 'throw', 'hang'])(
    'extend answers %s: signal aborted with LeaseLostError before another holder can claim',
    async (mode) => {
      const fake = new FakeClock();
      const memory = new MemoryLock({ clock: fake });
      const flaky = new FlakyLock(memory);
      flaky.onlyOwners = new Set(['a']);
      const store = new MemoryStore();
      const rec = recordEvents();
      const start = fake.now();
      const leaseMs = 3000;

      let abortedAt: number | null = null;
      let abortReason: unknown = null;
      const a = new Scheduler({ lock: flaky, store, clock: fake, instanceId: 'a' });
      a.add({
        name: 'long',
        trigger: at(start + 1000),
        leaseMs,
        // a stubborn job: notes the abort but keeps running, then ends "successfully"; the lease
        // stays on the backend until it expires, and the run is still recorded as lease_lost
        run: async (ctx) => {
          ctx.signal.addEventListener('abort', () => {
            abortedAt = fake.now();
            abortReason = ctx.signal.reason;
          });
          await ctx.clock.sleep(6_000);
        },
      });
      a.start();
      await fake.advance(1000);
      const [aLease] = (await memory.inspect('long')).leases as [Lease];
      expect(aLease.owner).toBe('a');
      flaky.extendMode = mode;

      // another instance tries every 100 ms; it may only win once a's lease expired
      const bRuns: { at: number; token: number }[] = [];
      // b keeps its history in a store of its own: it defines 'long' differently, and in one
      // registry its newer definition would come into force two heartbeats later (a rolling
      // deploy, see definitionsInForce), not within this test's 10 s
      const b = new Scheduler({
        lock: memory,
        store: new MemoryStore(),
        clock: fake,
        instanceId: 'b',
      });
      b.add({
        name: 'long',
        trigger: every(100),
        leaseMs,
        run: (ctx) => {
          bRuns.push({ at: fake.now(), token: ctx.token });
        },
      });
      b.start();
      await fake.advance(10_000);

      expect(abortedAt).not.toBeNull();
      expect(isFleetcronError(abortReason, 'LEASE_LOST')).toBe(true);
      const abortTime = abortedAt as unknown as number;
      // before the backend's expiry of a's lease, with the documented margin
      expect(abortTime).toBeLessThanOrEqual(aLease.expiresAt - abortMarginMs(leaseMs));
      if (mode === 'null') expect(abortTime).toBeLessThanOrEqual(start + 1000 + leaseMs / 3);
      const firstB = bRuns[0];
      expect(firstB).toBeDefined();
      expect(firstB!.at).toBeGreaterThan(abortTime);
      expect(firstB!.at).toBeGreaterThanOrEqual(aLease.expiresAt);
      expect(firstB!.token).toBeGreaterThan(aLease.token);

      const stopped = Promise.all([a.stop(), b.stop()]);
      await fake.advance(100);
      await stopped;
      rec.stop();
      const history = await allHistory(store, 'long');
      const aRuns = history.filter((e) => e.instanceId === 'a');
      expect(aRuns.map((e) => e.status)).toEqual(['lease_lost']);
      expect(aRuns[0]!.error).toContain('LeaseLostError');
      const lost = rec.events.filter((e) => e.type === 'lease.lost' && e.instanceId === 'a');
      expect(lost).toHaveLength(1);
      const finished = rec.events.find((e) => e.type === 'run.finished' && e.instanceId === 'a');
      expect(finished && finished.type === 'run.finished' && finished.status).toBe('lease_lost');
    },
  );

  it('a lease that expires while the claim is in flight is never run, and is handed back', async () => {
    const fake = new FakeClock();
    const memory = new MemoryLock({ clock: fake });
    // a lock whose claim answer arrives past the local deadline (lease 2000 ms minus the 200 ms
    // margin) but before the scheduler gives up on the claim (after the lease)
    const slow = Object.create(memory) as MemoryLock;
    slow.claim = async (request) => {
      const result = await memory.claim(request);
      await fake.sleep(1_900);
      return result;
    };
    // single claims (the batched case: claim-batch.test.ts)
    (slow as { claimMany?: unknown }).claimMany = undefined;
    const store = new MemoryStore();
    const s = new Scheduler({ lock: slow, store, clock: fake, instanceId: 'a' });
    let ran = false;
    s.add({
      name: 'late',
      trigger: at(fake.now() + 1000),
      leaseMs: 2000,
      run: () => {
        ran = true;
      },
    });
    s.start();
    await fake.advance(10_000);
    expect(ran).toBe(false);
    const history = await allHistory(store, 'late');
    expect(history.map((e) => [e.status, e.reason])).toEqual([['skipped', 'lease_expired']]);
    // withdrawn: the fire is not burnt, nothing holds it
    expect(await memory.inspect('late')).toMatchObject({ fires: [], leases: [] });
    await s.stop();
  });
});
