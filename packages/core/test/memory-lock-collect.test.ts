import { describe, expect, it } from 'vitest';
import { FakeClock, MemoryLock } from '../src/index.js';

const WINDOW = 10_000;

const claim = (lock: MemoryLock, fireAt: number, owner: string) =>
  lock.claim({ key: 'k', fireAt, owner, leaseMs: 1000, exclusive: false });

/** Claim records the lock holds for `key` right now (private: what the sweep bounds). */
const held = (lock: MemoryLock, key = 'k'): number =>
  (lock as unknown as { keys: Map<string, { fires: Map<number, unknown> }> }).keys.get(key)?.fires
    .size ?? 0;

describe('MemoryLock: claim records are swept in bulk, answers are as if collected on time', () => {
  it('a record just past its window answers stale (not claimed) before any sweep ran', async () => {
    const clock = new FakeClock();
    const lock = new MemoryLock({ clock, windowMs: WINDOW });
    const fireAt = clock.now();
    expect((await claim(lock, fireAt, 'b')).status).toBe('won');
    await clock.advance(WINDOW + 1); // past the window, inside the sweep slack
    const late = await claim(lock, fireAt, 'a');
    expect(late).toMatchObject({ status: 'lost', reason: 'stale' });
    const again = await claim(lock, fireAt, 'b'); // even its owner: the record is gone
    expect(again).toMatchObject({ status: 'lost', reason: 'stale' });
    expect((await lock.inspect('k')).fires).toEqual([]);
  });

  it('keeps a key’s records bounded while fires keep coming (each claim is not a full scan)', async () => {
    const clock = new FakeClock();
    const lock = new MemoryLock({ clock, windowMs: WINDOW });
    let most = 0;
    for (let i = 0; i < 400; i++) {
      // one fire every 100 ms for 4 windows: about 100 records live at a time
      expect((await claim(lock, clock.now(), 'a')).status).toBe('won');
      most = Math.max(most, held(lock));
      await clock.advance(100);
    }
    expect(most).toBeGreaterThanOrEqual(WINDOW / 100);
    expect(most).toBeLessThanOrEqual((WINDOW * (1 + 1 / 8)) / 100 + 2);
    const kept = (await lock.inspect('k')).fires.map((f) => f.fireAt);
    expect(Math.min(...kept)).toBeGreaterThanOrEqual(clock.now() - WINDOW);
  });

  it('keeps every record at least until its window ends, claimed in any order', async () => {
    const clock = new FakeClock();
    const lock = new MemoryLock({ clock, windowMs: WINDOW });
    const now = clock.now();
    for (const fireAt of [now, now - 9_000, now - 5_000]) {
      expect((await claim(lock, fireAt, 'b')).status).toBe('won');
    }
    await clock.advance(2_000); // now - 9000 is past its window (by 1000 ms)
    expect((await claim(lock, now - 9_000, 'a')).status).toBe('lost');
    expect(await claim(lock, now - 5_000, 'a')).toMatchObject({ reason: 'claimed' });
    expect(await claim(lock, now, 'a')).toMatchObject({ reason: 'claimed' });
    expect((await lock.inspect('k')).fires.map((f) => f.fireAt)).toEqual([now - 5_000, now]);
  });
});
