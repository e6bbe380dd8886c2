import { describe, expect, it } from 'vitest';
import { FakeClock } from '../src/index.js';

describe('FakeClock.freeze()', () => {
  it('moves wall and monotonic time on without firing timers; overdue timers fire at the next advance, in order', async () => {
    const fake = new FakeClock(0);
    const fired: string[] = [];
    fake.setTimer(() => fired.push(`b@${fake.monotonic()}`), 200);
    fake.setTimer(() => fired.push(`a@${fake.monotonic()}`), 100);
    fake.setTimer(() => fired.push(`c@${fake.monotonic()}`), 900);
    fake.freeze(500);
    expect([fake.now(), fake.monotonic()]).toEqual([500, 500]);
    await fake.flush();
    expect(fired).toEqual([]); // nothing ran during the freeze, nor right after it
    await fake.advance(0);
    // late, in due order, and time never goes back
    expect(fired).toEqual(['a@500', 'b@500']);
    expect([fake.now(), fake.monotonic()]).toEqual([500, 500]);
    await fake.advance(400);
    expect(fired).toEqual(['a@500', 'b@500', 'c@900']);
  });
});
