import { describe, expect, it } from 'vitest';
import {
  at,
  type Execution,
  FakeClock,
  isFleetcronError,
  type JobContext,
  MemoryLock,
  MemoryStore,
  Scheduler,
  subscribe,
} from '../../src/index.js';
import { allHistory, Gate, HeldAnswerLock, HeldAnswerStore, recordEvents } from './helpers.js';

// Lease 3000 ms: margin 300 ms, so the local deadline is 2700 ms after the claim was SENT;
// renewals every 1000 ms. A "freeze" is FakeClock.freeze(): time moves on, no timer runs, and
// the answer the process was waiting for arrives first (as after a real SIGSTOP).
const LEASE = 3000;

function setup(options: { withdrawable?: boolean } = {}) {
  const fake = new FakeClock();
  const memory = new MemoryLock({ clock: fake });
  const lock = new HeldAnswerLock(memory, options.withdrawable ?? true);
  const store = new HeldAnswerStore(new MemoryStore());
  const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a' });
  const fireAt = fake.now() + 1000;
  const runs: JobContext[] = [];
  const job = new Gate();
  s.add({
    name: 'job',
    trigger: at(fireAt),
    leaseMs: LEASE,
    run: async (ctx) => {
      runs.push(ctx);
      await job.wait(); // ignores its signal
    },
  });
  /** Another instance claims the same fire directly: can it still run it? */
  const claimByB = () =>
    memory.claim({ key: 'job', fireAt, owner: 'b', leaseMs: LEASE, exclusive: true });
  const rows = async () =>
    (await allHistory(store, 'job')).map((e: Execution) => [e.status, e.reason ?? null]);
  return { fake, memory, lock, store, s, fireAt, runs, job, claimByB, rows };
}

/** Lets every pending answer and callback run, without firing any (overdue) timer. */
async function settle(fake: FakeClock): Promise<void> {
  for (let i = 0; i < 5; i++) await fake.flush();
}

async function stop(t: ReturnType<typeof setup>): Promise<void> {
  t.job.open();
  const stopped = t.s.stop({ drainMs: 1000 });
  await t.fake.advance(5_000);
  await stopped;
}

describe('a frozen holder: the lease deadline is checked synchronously at every step', () => {
  it('claim answered after the deadline: not started, skipped lease_expired, claim withdrawn', async () => {
    const t = setup();
    t.lock.holdClaims = true;
    t.s.start();
    await t.fake.advance(1000);
    expect(t.lock.claimGate.waiting).toBe(1);
    t.fake.freeze(2_800); // past the deadline (2700), before the claim's give-up bound (3000)
    t.lock.claimGate.open();
    await settle(t.fake);
    expect(t.runs).toHaveLength(0);
    expect(t.store.jobStateReads).toBe(0); // nothing further is done on an expired lease
    expect(await t.rows()).toEqual([['skipped', 'lease_expired']]);
    expect(t.lock.withdrawn).toBe(1);
    expect(await t.memory.inspect('job')).toMatchObject({ fires: [], leases: [] });
    expect((await t.claimByB()).status).toBe('won');
    await stop(t);
  });

  it('paused check answered after the deadline: not started, its running row ends skipped', async () => {
    const t = setup();
    t.store.holdJobState = true;
    t.s.start();
    await t.fake.advance(1000);
    expect(t.store.gate.waiting).toBe(1);
    t.fake.freeze(2_800);
    t.store.gate.open();
    await settle(t.fake);
    expect(t.runs).toHaveLength(0);
    // the `running` row went out beside the paused read; the same row ends `skipped`
    const running = t.store.recorded.filter((e) => e.status === 'running');
    const skipped = t.store.recorded.filter((e) => e.status === 'skipped');
    expect(running).toHaveLength(1);
    expect(skipped.map((e) => e.id)).toEqual([running[0]?.id]);
    expect(await t.rows()).toEqual([['skipped', 'lease_expired']]);
    expect((await t.claimByB()).status).toBe('won');
    await stop(t);
  });

  it('running write answered after the deadline: the job never starts; the row ends skipped', async () => {
    const t = setup();
    t.store.holdRunning = true;
    t.s.start();
    await t.fake.advance(1000);
    expect(t.store.gate.waiting).toBe(1);
    t.fake.freeze(2_800);
    t.store.gate.open();
    await settle(t.fake);
    expect(t.runs).toHaveLength(0);
    // the same row: running, then skipped (never left running)
    expect(await t.rows()).toEqual([['skipped', 'lease_expired']]);
    expect((await t.claimByB()).status).toBe('won');
    await stop(t);
  });

  it('job settles after the deadline: signal aborted first, recorded lease_lost, never succeeded', async () => {
    const t = setup();
    const rec = recordEvents();
    const atFinish: { aborted: boolean; status: string }[] = [];
    const unsubscribe = recordFinish(t, atFinish);
    t.s.start();
    await t.fake.advance(1000);
    expect(t.runs).toHaveLength(1);
    t.fake.freeze(2_800);
    t.job.open(); // the job returns right after the freeze, before any timer runs
    await settle(t.fake);
    unsubscribe();
    rec.stop();
    expect(atFinish).toEqual([{ aborted: true, status: 'lease_lost' }]);
    const signal = t.runs[0]!.signal;
    expect(isFleetcronError(signal.reason, 'LEASE_LOST')).toBe(true);
    const [row] = await allHistory(t.store, 'job');
    expect(row).toMatchObject({ status: 'lease_lost', token: 1 });
    expect(row!.error).toContain('LeaseLostError');
    const types = rec.events.filter((e) => e.instanceId === 'a').map((e) => e.type);
    expect(types.indexOf('lease.lost')).toBeLessThan(types.indexOf('run.finished'));
    await stop(t);
  });

  it('renewal answered after the deadline: aborted when the answer arrives, before any timer', async () => {
    const t = setup();
    t.lock.holdExtends = true;
    t.s.start();
    await t.fake.advance(2000); // started at 1000, renewal sent at 2000
    expect(t.lock.extendGate.waiting).toBe(1);
    t.fake.freeze(3_500); // past the deadline the renewal would set (2000 + 2700)
    t.lock.extendGate.open();
    await settle(t.fake);
    const signal = t.runs[0]!.signal;
    expect(signal.aborted).toBe(true);
    expect(isFleetcronError(signal.reason, 'LEASE_LOST')).toBe(true);
    // recorded at once, although the job (ignoring its signal) still runs
    expect(await t.rows()).toEqual([['lease_lost', null]]);
    await stop(t);
    expect(await t.rows()).toEqual([['lease_lost', null]]); // not overwritten when it settles
  });

  it('a renewal due during a freeze is not sent once past the deadline (even if the backend would take it)', async () => {
    const t = setup();
    t.s.start();
    await t.fake.advance(1000);
    // frozen past the local deadline (2700) but not the backend's expiry (3000)
    t.fake.freeze(2_750);
    await t.fake.advance(0); // the overdue renewal timer runs first
    expect(t.lock.extendsSent).toBe(0);
    const signal = t.runs[0]!.signal;
    expect(isFleetcronError(signal.reason, 'LEASE_LOST')).toBe(true);
    await stop(t);
    expect(await t.rows()).toEqual([['lease_lost', null]]);
  });
});

/** Notes, at each `run.finished` of instance `a`, whether the run's signal was aborted. */
function recordFinish(
  t: ReturnType<typeof setup>,
  out: { aborted: boolean; status: string }[],
): () => void {
  return subscribe((e) => {
    if (e.type === 'run.finished' && e.instanceId === 'a') {
      out.push({ aborted: t.runs[0]?.signal.aborted ?? false, status: e.status });
    }
  });
}

describe('ctx.lease', () => {
  it('remainingMs() counts down to the deadline, renewals move it, assertValid() throws once past', async () => {
    const t = setup();
    const seen: Record<string, unknown> = {};
    t.s.add({
      name: 'check',
      trigger: at(t.fireAt),
      leaseMs: LEASE,
      run: async (ctx) => {
        seen.token = ctx.lease.token === ctx.token;
        seen.atStart = ctx.lease.remainingMs();
        ctx.lease.assertValid();
        await ctx.clock.sleep(500);
        seen.after500 = ctx.lease.remainingMs();
        await ctx.clock.sleep(1000); // the renewal at 1000 moved the deadline to 1000 + 2700
        seen.after1500 = ctx.lease.remainingMs();
        await t.job.wait();
        seen.abortedBefore = ctx.signal.aborted;
        try {
          ctx.lease.assertValid();
        } catch (error) {
          seen.thrown = error;
        }
        seen.abortedAfter = ctx.signal.aborted;
        seen.afterFreeze = ctx.lease.remainingMs();
      },
    });
    t.s.start();
    await t.fake.advance(3000);
    t.fake.freeze(5_000);
    t.job.open();
    await settle(t.fake);
    expect(seen).toMatchObject({
      token: true,
      atStart: 2700,
      after500: 2200,
      after1500: 2200,
      abortedBefore: false,
      abortedAfter: true,
      afterFreeze: 0,
    });
    expect(isFleetcronError(seen.thrown, 'LEASE_LOST')).toBe(true);
    await stop(t);
  });
});

describe('claims given up on never burn their fire', () => {
  it('a claim won after the scheduler gave up is withdrawn: another instance can still run the fire', async () => {
    const t = setup();
    t.lock.holdClaims = true;
    t.s.start();
    await t.fake.advance(1000);
    await t.fake.advance(LEASE); // no answer within the lease: give up, fail closed
    expect(await t.rows()).toEqual([['skipped', 'backend_unavailable']]);
    const [signal] = t.lock.signals;
    expect(signal!.aborted).toBe(true);
    expect(isFleetcronError(signal!.reason, 'BACKEND_UNAVAILABLE')).toBe(true);
    expect((await t.memory.inspect('job')).fires).toMatchObject([{ owner: 'a', outcome: 'won' }]);
    t.lock.claimGate.open(); // the answer comes at last: won
    await settle(t.fake);
    expect(t.runs).toHaveLength(0);
    expect(t.lock.withdrawn).toBe(1);
    expect(await t.memory.inspect('job')).toMatchObject({ fires: [], leases: [] });
    expect((await t.claimByB()).status).toBe('won');
    await stop(t);
  });

  it('without lock.withdraw an unrun claim is released: its lease does not linger', async () => {
    const t = setup({ withdrawable: false });
    t.lock.holdClaims = true;
    t.s.start();
    await t.fake.advance(1000);
    t.fake.freeze(2_800); // past the local deadline; the backend's lease lives until 3000
    t.lock.claimGate.open();
    await settle(t.fake);
    expect(await t.rows()).toEqual([['skipped', 'lease_expired']]);
    const held = await t.memory.inspect('job');
    expect(held.leases).toEqual([]);
    expect(held.fires).toMatchObject([{ owner: 'a', outcome: 'won' }]); // not withdrawn
    await stop(t);
  });

  it('stop() gives up a claim still in flight: its signal is aborted, a late win handed back', async () => {
    const t = setup();
    t.lock.holdClaims = true;
    t.s.start();
    await t.fake.advance(1000);
    const stopped = t.s.stop({ drainMs: 500 });
    await t.fake.advance(600); // past the drain time
    const [signal] = t.lock.signals;
    expect(isFleetcronError(signal!.reason, 'SCHEDULER_STOPPED')).toBe(true);
    await t.fake.advance(100);
    await stopped; // without waiting for the claim's own bound (the lease)
    t.lock.claimGate.open();
    await settle(t.fake);
    expect(t.runs).toHaveLength(0);
    expect(t.lock.withdrawn).toBe(1);
    expect(await t.memory.inspect('job')).toMatchObject({ fires: [], leases: [] });
    expect(await t.rows()).toEqual([]); // it never knew it had won: nothing to record
  });
});
