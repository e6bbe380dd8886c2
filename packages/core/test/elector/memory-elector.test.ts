import { describe, expect, it } from 'vitest';
import { FakeClock, isFleetcronError, MemoryElector } from '../../src/index.js';

describe('MemoryElector', () => {
  it('elects one candidate; others are followers told the leader and the backend time', async () => {
    const clock = new FakeClock();
    const elector = new MemoryElector({ clock });
    const a = await elector.campaign({ election: 'e', id: 'a', ttlMs: 1000 });
    const b = await elector.campaign({ election: 'e', id: 'b', ttlMs: 1000 });
    expect(a).toEqual({
      status: 'elected',
      leader: { election: 'e', id: 'a', term: 1, expiresAt: clock.now() + 1000 },
    });
    expect(b).toEqual({ status: 'follower', leader: { ...a.leader }, now: clock.now() });
    expect(await elector.leader('e')).toEqual(a.leader);
    expect(await elector.leader('other')).toBeNull();
  });

  it('terms strictly increase: expiry, resignation, re-election of the same id', async () => {
    const clock = new FakeClock();
    const elector = new MemoryElector({ clock });
    const terms: number[] = [];
    const elect = async (id: string) => {
      const result = await elector.campaign({ election: 'e', id, ttlMs: 1000 });
      if (result.status !== 'elected') throw new Error(`${id} not elected`);
      terms.push(result.leader.term);
      return result.leader;
    };
    const first = await elect('a');
    await elect('a'); // the same id again: a new term, never the same one twice
    await clock.advance(1000);
    const third = await elect('b');
    expect(await elector.resign(first)).toBe(false);
    expect(await elector.resign(third)).toBe(true);
    await elect('a');
    expect(terms).toEqual([1, 2, 3, 4]);
  });

  it('renews and resigns only the term given; a stale term never touches the new one', async () => {
    const clock = new FakeClock();
    const elector = new MemoryElector({ clock });
    const old = await elector.campaign({ election: 'e', id: 'a', ttlMs: 1000 });
    if (old.status !== 'elected') throw new Error('a not elected');
    const renewed = await elector.renew(old.leader, 2000);
    expect(renewed?.expiresAt).toBe(clock.now() + 2000);
    await clock.advance(2000);
    expect(await elector.renew(old.leader, 1000)).toBeNull();
    const next = await elector.campaign({ election: 'e', id: 'b', ttlMs: 1000 });
    if (next.status !== 'elected') throw new Error('b not elected');
    expect(await elector.renew(old.leader, 1000)).toBeNull();
    expect(await elector.resign(old.leader)).toBe(false);
    expect(await elector.leader('e')).toEqual(next.leader);
  });

  it('bad input: typed errors naming the field', async () => {
    const elector = new MemoryElector();
    const cases: [Record<string, unknown>, string][] = [
      [{ election: '', id: 'a', ttlMs: 1000 }, 'election'],
      [{ election: 'x'.repeat(513), id: 'a', ttlMs: 1000 }, 'election'],
      [{ election: 'e', id: '', ttlMs: 1000 }, 'id'],
      [{ election: 'e', id: 'a', ttlMs: 0 }, 'ttlMs'],
      [{ election: 'e', id: 'a', ttlMs: Number.NaN }, 'ttlMs'],
    ];
    for (const [request, field] of cases) {
      const error = await elector.campaign(request as never).catch((e: unknown) => e);
      expect(isFleetcronError(error, 'INVALID_OPTION'), String(error)).toBe(true);
      expect((error as { field?: string }).field).toBe(field);
    }
  });
});
