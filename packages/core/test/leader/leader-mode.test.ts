import { describe, expect, it } from 'vitest';
import {
  every,
  type FleetcronEvent,
  LeaseTooShortError,
  MemoryElector,
  MemoryLock,
  MemoryStore,
  NotLeaderError,
  Scheduler,
} from '../../src/index.js';
import { recordEvents } from '../scheduler/helpers.js';
import { secondsBetween, simulatedFleet } from './fleet-helpers.js';

const isTick = (key: string) => key === 'tick';
type LeaderChanged = Extract<FleetcronEvent, { type: 'leader.changed' }>;
const leaderEvents = (events: FleetcronEvent[]) =>
  events.filter((e): e is LeaderChanged => e.type === 'leader.changed');

/** Every fire of `tick` in the history, by fire time: how many runs each had. */
function runsPerFire(runs: { fireAt: number }[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const r of runs) out.set(r.fireAt, (out.get(r.fireAt) ?? 0) + 1);
  return out;
}

describe('leader mode: options', () => {
  const lock = new MemoryLock();
  it('needs an elector, and only then takes one; typed errors naming the field', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ mode: 'leader' }, 'elector'],
      [{ mode: 'leader', elector: {} }, 'elector'],
      [{ elector: new MemoryElector() }, 'elector'],
      [{ election: 'x' }, 'election'],
      [{ leaderTtlMs: 5_000 }, 'leaderTtlMs'],
      [{ mode: 'leaders' }, 'mode'],
      [{ mode: 'leader', elector: new MemoryElector(), election: '' }, 'election'],
      [{ mode: 'leader', elector: new MemoryElector(), leaderTtlMs: -1 }, 'leaderTtlMs'],
      [{ shardGraceMs: 0 }, 'shardGraceMs'],
    ];
    for (const [options, field] of cases) {
      expect(() => new Scheduler({ lock, ...options } as never), field).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', field }),
      );
    }
  });

  it('refuses a term shorter than the elector holds (LeaseTooShortError on leaderTtlMs)', () => {
    const elector = new MemoryElector();
    elector.capabilities.minTtlMs = 2_000;
    const make = () => new Scheduler({ lock, mode: 'leader', elector, leaderTtlMs: 1_000 });
    expect(make).toThrow(LeaseTooShortError);
    expect(make).toThrow(expect.objectContaining({ field: 'leaderTtlMs' }));
    const ok = new Scheduler({ lock, mode: 'leader', elector });
    expect(ok.isLeader).toBe(false);
  });
});

describe('leader mode: only the leader claims', () => {
  it('one leader claims every fire once; followers send no claim; isLeader and leader.changed', async () => {
    const fleet = simulatedFleet();
    const { fake, lock, elector } = fleet;
    const rec = recordEvents();
    const options = { mode: 'leader' as const, elector, leaderTtlMs: 3_000 };
    const members = ['a', 'b', 'c'].map((id) => fleet.member(id, {}, options));
    const start = fake.now();
    for (const m of members) m.start();
    await fake.advance(60_000);
    const end = fake.now();
    const leaders = members.filter((m) => m.isLeader);
    expect(leaders.length).toBe(1);
    const leader = leaders[0]!;
    await fleet.stopAll();
    rec.stop();

    // every fire from the first one after the election ran exactly once, on the leader
    const expected = secondsBetween(start + 1_000, end);
    const perFire = runsPerFire(fleet.runs);
    expect([...perFire.values()].every((n) => n === 1)).toBe(true);
    expect(expected.filter((t) => !perFire.has(t))).toEqual([]);
    expect(new Set(fleet.runs.map((r) => r.instanceId))).toEqual(new Set([leader.instanceId]));
    // backend work per fire: one claim (the leader's); followers claimed nothing
    for (const m of members) {
      const claims = lock.claimsBy(m.instanceId, isTick);
      if (m === leader) expect(claims).toBe(perFire.size);
      else expect(claims).toBe(0);
    }
    const changed = leaderEvents(rec.events);
    expect(changed[0]).toMatchObject({
      instanceId: leader.instanceId,
      isLeader: true,
      election: 'fleetcron',
      term: 1,
    });
    // stop() resigned at its end: the leader published its loss, a follower took over at once
    expect(changed.some((e) => e.instanceId === leader.instanceId && !e.isLeader)).toBe(true);
  });

  it('a follower takes over within TTL + a third when the leader is cut off; no fire twice', async () => {
    const fleet = simulatedFleet();
    const { fake, lock, elector } = fleet;
    const rec = recordEvents();
    const ttl = 3_000;
    const options = { mode: 'leader' as const, elector, leaderTtlMs: ttl };
    const members = ['a', 'b', 'c'].map((id) => fleet.member(id, { leaseMs: 2_000 }, options));
    for (const m of members) m.start();
    await fake.advance(10_000);
    const old = members.find((m) => m.isLeader)!;
    // the leader is partitioned from the elector and the lock (its steps fail or hang)
    elector.down.add(old.instanceId);
    lock.dead.add(old.instanceId);
    const cutAt = fake.now();
    await fake.advance(ttl * 3);
    const next = members.find((m) => m.isLeader);
    expect(next).toBeDefined();
    expect(next).not.toBe(old);
    expect(old.isLeader).toBe(false);
    await fake.advance(20_000);
    const end = fake.now();
    lock.dead.delete(old.instanceId);
    elector.down.delete(old.instanceId);
    await fleet.stopAll();
    rec.stop();

    const perFire = runsPerFire(fleet.runs);
    expect([...perFire.entries()].filter(([, n]) => n > 1)).toEqual([]);
    // a fire is handled when it ran, or was recorded skipped (the cut-off leader's last lease
    // still held the job for up to its 2 s: overlap)
    const recorded = new Set((await fleet.history()).map((e) => e.fireAt));
    // the fires missed are those of the takeover window only: at most TTL + a third + 1 s
    const missed = secondsBetween(cutAt, end).filter((t) => !recorded.has(t));
    expect([...perFire.keys()].every((t) => recorded.has(t))).toBe(true);
    expect(missed.length).toBeLessThanOrEqual(Math.ceil((ttl + ttl / 3) / 1000) + 1);
    expect(missed.every((t) => t <= cutAt + ttl + ttl / 3 + 1_000)).toBe(true);
    // the old leader lost its term (by its local deadline) before the new one was elected
    const changed = leaderEvents(rec.events);
    const lostAt = changed.find((e) => e.instanceId === old.instanceId && !e.isLeader)!.at;
    const electedAt = changed.find((e) => e.instanceId === next!.instanceId && e.isLeader)!.at;
    expect(lostAt).toBeLessThan(electedAt);
  });

  it("the leader's runs are aborted (NotLeaderError, recorded aborted) when its term is lost", async () => {
    const fleet = simulatedFleet();
    const { fake, elector, store } = fleet;
    const reasons: unknown[] = [];
    const options = { mode: 'leader' as const, elector, leaderTtlMs: 3_000 };
    const job = {
      name: 'long',
      trigger: every(60_000),
      leaseMs: 60_000,
      run: (ctx: { signal: AbortSignal }) =>
        new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            reasons.push(ctx.signal.reason);
            resolve();
          });
        }),
    };
    const solo = fleet.member('solo', job, options);
    solo.start();
    await fake.advance(60_500); // elected, then the first fire starts and keeps running
    expect(solo.isLeader).toBe(true);
    elector.down.add('solo'); // renewals fail: the term ends at its local deadline
    await fake.advance(5_000);
    expect(solo.isLeader).toBe(false);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(NotLeaderError);
    await fake.advance(100);
    const [row] = (await store.history('long')).executions;
    expect(row).toMatchObject({ status: 'aborted' });
    elector.down.delete('solo');
    await fleet.stopAll();
  });
});

describe('claims mode is unchanged', () => {
  it('every instance claims every fire; isLeader is false', async () => {
    const fleet = simulatedFleet();
    const members = ['a', 'b'].map((id) => fleet.member(id));
    for (const m of members) m.start();
    await fleet.fake.advance(10_000);
    expect(members.map((m) => m.isLeader)).toEqual([false, false]);
    for (const m of members) expect(fleet.lock.claimsBy(m.instanceId, isTick)).toBeGreaterThan(8);
    await fleet.stopAll();
    expect([...runsPerFire(fleet.runs).values()].every((n) => n === 1)).toBe(true);
  });
});

// keep the unused import list honest for the typecheck
void MemoryStore;
