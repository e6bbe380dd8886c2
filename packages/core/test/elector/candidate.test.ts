import { describe, expect, it } from 'vitest';
import {
  Candidate,
  type CandidateEvent,
  type Elector,
  FakeClock,
  isFleetcronError,
  MemoryElector,
  NotLeaderError,
} from '../../src/index.js';

const TTL = 3000;

function fleet(clock: FakeClock, ids: string[], elector: Elector = new MemoryElector({ clock })) {
  const events: (CandidateEvent & { id: string })[] = [];
  const candidates = ids.map((id) => {
    const candidate = new Candidate({ elector, election: 'e', id, ttlMs: TTL, clock });
    candidate.onChange((event) => events.push({ ...event, id }));
    return candidate;
  });
  return { candidates, events, elector };
}

describe('Candidate', () => {
  it('one leader; renewals every third of the TTL keep it for many TTLs', async () => {
    const clock = new FakeClock();
    const { candidates, events } = fleet(clock, ['a', 'b', 'c']);
    for (const c of candidates) c.start();
    await clock.advance(10);
    expect(candidates.map((c) => c.isLeader)).toEqual([true, false, false]);
    const { term, signal } = candidates[0]!.assertLeader();
    await clock.advance(TTL * 10);
    expect(candidates.map((c) => c.isLeader)).toEqual([true, false, false]);
    expect(candidates[0]!.term).toBe(term);
    expect(signal.aborted).toBe(false);
    expect(events.filter((e) => e.type === 'elected')).toHaveLength(1);
    expect(candidates[1]!.knownLeader).toMatchObject({ id: 'a', term });
  });

  it('a frozen leader is not leader the moment it thaws (synchronously), before any timer runs', async () => {
    const clock = new FakeClock();
    const { candidates } = fleet(clock, ['a']);
    candidates[0]!.start();
    await clock.advance(10);
    const leadership = candidates[0]!.assertLeader();
    clock.freeze(TTL); // no timer fires: only the synchronous check can tell
    expect(leadership.signal.aborted).toBe(false);
    expect(candidates[0]!.isLeader).toBe(false);
    expect(leadership.signal.aborted).toBe(true);
    expect(leadership.signal.reason).toBeInstanceOf(NotLeaderError);
    expect(() => leadership.assertValid()).toThrow(NotLeaderError);
    expect(() => candidates[0]!.assertLeader()).toThrow(NotLeaderError);
  });

  it('the deadline is send time + TTL − margin: the signal aborts before the backend lets another win', async () => {
    const clock = new FakeClock();
    const memory = new MemoryElector({ clock });
    let down = false; // a's connection to the backend breaks; b's does not
    const fail = () => Promise.reject(new Error('backend down'));
    const elector: Elector = {
      backend: 'memory',
      capabilities: memory.capabilities,
      campaign: (r) => (down ? fail() : memory.campaign(r)),
      renew: (t, ms) => (down ? fail() : memory.renew(t, ms)),
      resign: (t) => (down ? fail() : memory.resign(t)),
      leader: (e) => memory.leader(e),
    };
    const a = fleet(clock, ['a'], elector);
    const b = fleet(clock, ['b'], memory);
    const candidates = [a.candidates[0]!, b.candidates[0]!];
    candidates[0]!.start();
    await clock.advance(10);
    const { signal } = candidates[0]!.assertLeader();
    candidates[1]!.start();
    down = true;
    let abortedAt = -1;
    signal.addEventListener('abort', () => {
      abortedAt = clock.monotonic();
    });
    await clock.advance(TTL * 2);
    const events = [...a.events, ...b.events];
    const elected = events.find((e) => e.type === 'elected' && e.id === 'b');
    expect(elected, 'b takes over once a expired').toBeDefined();
    const lost = events.find((e) => e.type === 'lost' && e.id === 'a');
    expect(lost).toMatchObject({ reason: 'deadline' });
    expect(abortedAt).toBeGreaterThan(0);
    expect(abortedAt).toBeLessThanOrEqual(10 + TTL - 300);
    expect(events.filter((e) => e.type === 'error' && e.id === 'a').length).toBeGreaterThan(0);
    expect(candidates[1]!.assertLeader().term).toBeGreaterThan(1);
  });

  it('resign() aborts first and hands over at once (within one campaign interval, not a TTL)', async () => {
    const clock = new FakeClock();
    const { candidates, events } = fleet(clock, ['a', 'b']);
    candidates[0]!.start();
    await clock.advance(10);
    candidates[1]!.start();
    await clock.advance(10);
    const { signal, term } = candidates[0]!.assertLeader();
    const order: string[] = [];
    signal.addEventListener('abort', () => order.push('aborted'));
    candidates[0]!.onChange((e) => order.push(e.type));
    const resigned = candidates[0]!.resign();
    expect(signal.aborted).toBe(true);
    await resigned;
    expect(order.slice(0, 2)).toEqual(['aborted', 'lost']);
    await clock.advance(TTL / 3 + 10);
    expect(candidates[1]!.assertLeader().term).toBe(term + 1);
    await clock.advance(TTL * 3);
    expect(candidates[0]!.isLeader, 'a resigned and stays out').toBe(false);
    expect(events.filter((e) => e.type === 'lost')).toHaveLength(1);
  });

  it('the backend answering "not yours" loses the term at once', async () => {
    const clock = new FakeClock();
    const { candidates, elector } = fleet(clock, ['a']);
    candidates[0]!.start();
    await clock.advance(10);
    const leadership = candidates[0]!.assertLeader();
    const info = await elector.leader('e');
    await elector.resign(info!); // someone ended the term behind its back
    await clock.advance(TTL / 3 + 10);
    expect(leadership.signal.aborted).toBe(true);
    // it campaigns again and wins a new term
    await clock.advance(10);
    expect(candidates[0]!.assertLeader().term).toBeGreaterThan(leadership.term);
  });

  it('a campaign answered after its local deadline is not relied on: the term is resigned on the backend', async () => {
    const clock = new FakeClock();
    const memory = new MemoryElector({ clock });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const resigned: number[] = [];
    const elector: Elector = {
      backend: 'memory',
      capabilities: memory.capabilities,
      campaign: async (r) => {
        const result = await memory.campaign(r);
        await gate; // the answer is held back (a frozen process, a slow network)
        return result;
      },
      renew: (t, ms) => memory.renew(t, ms),
      resign: (t) => {
        resigned.push(t.term);
        return memory.resign(t);
      },
      leader: (e) => memory.leader(e),
    };
    const { candidates, events } = fleet(clock, ['a'], elector);
    candidates[0]!.start();
    await clock.advance(1);
    clock.freeze(TTL); // the process stood still while the answer was on its way
    release();
    await clock.flush();
    expect(candidates[0]!.isLeader).toBe(false);
    expect(events.filter((e) => e.type === 'elected')).toEqual([]);
    await clock.advance(TTL); // the step timed out meanwhile, or was answered late: either way resigned
    expect(resigned).toContain(1);
  });

  it('a hanging campaign step times out after a TTL and is retried; listeners that throw are ignored', async () => {
    const clock = new FakeClock();
    const memory = new MemoryElector({ clock });
    let hang = true;
    const elector: Elector = {
      backend: 'memory',
      capabilities: memory.capabilities,
      campaign: (r) => (hang ? new Promise(() => {}) : memory.campaign(r)),
      renew: (t, ms) => memory.renew(t, ms),
      resign: (t) => memory.resign(t),
      leader: (e) => memory.leader(e),
    };
    const { candidates, events } = fleet(clock, ['a'], elector);
    candidates[0]!.onChange(() => {
      throw new Error('a faulty listener');
    });
    candidates[0]!.start();
    await clock.advance(TTL + 1);
    expect(
      events.some((e) => e.type === 'error' && /did not answer within/.test(e.error.message)),
    ).toBe(true);
    hang = false;
    await clock.advance(TTL / 3 + 1);
    expect(candidates[0]!.isLeader).toBe(true);
  });

  it('bad options: typed errors naming the field', () => {
    const elector = new MemoryElector();
    const bad: [Record<string, unknown>, string][] = [
      [{ elector: {}, election: 'e', id: 'a', ttlMs: 1000 }, 'elector'],
      [{ elector, election: '', id: 'a', ttlMs: 1000 }, 'election'],
      [{ elector, election: 'e', id: '', ttlMs: 1000 }, 'id'],
      [{ elector, election: 'e', id: 'a', ttlMs: -1 }, 'ttlMs'],
      [
        { elector, election: 'e', id: 'a', ttlMs: 1000, campaignIntervalMs: 0 },
        'campaignIntervalMs',
      ],
      [
        {
          elector: {
            ...elector,
            campaign: elector.campaign,
            capabilities: { ...elector.capabilities, minTtlMs: 2000 },
          },
          election: 'e',
          id: 'a',
          ttlMs: 1000,
        },
        'ttlMs',
      ],
    ];
    for (const [options, field] of bad) {
      let caught: unknown;
      try {
        new Candidate(options as never);
      } catch (error) {
        caught = error;
      }
      expect(isFleetcronError(caught), String(caught)).toBe(true);
      expect((caught as { field?: string }).field).toBe(field);
    }
  });
});
