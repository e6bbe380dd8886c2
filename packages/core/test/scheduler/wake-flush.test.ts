import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/index.js';
import { Batcher } from '../../src/scheduler/lock-calls/batcher.js';
import { TimerQueue } from '../../src/scheduler/timing/timer-queue.js';

/** A batcher whose calls are recorded, flushed by the default `setImmediate` unless told sooner. */
function recordingBatcher(clock: FakeClock) {
  const calls: number[][] = [];
  const batcher = new Batcher<number, number>({
    ...{ size: 10, clock, name: 'testMany' },
    call: async (items) => {
      calls.push([...items]);
      return items.map((n) => n * 10);
    },
  });
  return { batcher, calls };
}

describe('claims of one wake leave at the end of the wake', () => {
  it('afterEachWake runs once per wake, after every due callback, within the wake', async () => {
    const fake = new FakeClock();
    const errors: unknown[] = [];
    const q = new TimerQueue(fake, (e) => errors.push(e));
    const order: string[] = [];
    q.afterEachWake(() => order.push('end'));
    q.after(100, () => order.push('a'));
    q.after(100, () => order.push('b'));
    q.after(300, () => order.push('c'));
    await fake.advance(1_000);
    expect(order).toEqual(['a', 'b', 'end', 'c', 'end']);
    q.afterEachWake(() => {
      throw new Error('hook');
    });
    q.after(10, () => order.push('d'));
    await fake.advance(100);
    expect(order.at(-1)).toBe('d');
    expect(errors.map((e) => (e as Error).message)).toEqual(['hook']); // reported, queue goes on
  });

  it('flushNow sends what was submitted at once, in one call, and the deferred flush sends nothing again', async () => {
    const fake = new FakeClock();
    const { batcher, calls } = recordingBatcher(fake);
    const sent = [1, 2, 3].map((n) => batcher.submit(n));
    batcher.flushNow();
    expect(calls).toEqual([[1, 2, 3]]); // synchronously, not a macrotask later
    const answers = await Promise.all(sent.map(async (s) => (await s)?.answer));
    expect(answers).toEqual([10, 20, 30]);
    await new Promise((resolve) => setImmediate(resolve)); // the deferred flush has run
    expect(calls).toEqual([[1, 2, 3]]);
    batcher.flushNow(); // nothing pending: no call
    const later = batcher.submit(4); // a later submit is flushed by the default defer
    expect(calls).toHaveLength(1);
    expect(await (await later)?.answer).toBe(40);
    expect(calls).toEqual([[1, 2, 3], [4]]);
  });

  it('a batch submitted by due callbacks leaves before the next macrotask when the wake ends', async () => {
    const fake = new FakeClock();
    const q = new TimerQueue(fake, (e) => {
      throw e;
    });
    const { batcher, calls } = recordingBatcher(fake);
    q.afterEachWake(() => batcher.flushNow());
    let callsAtWakeEnd = -1;
    for (const n of [1, 2, 3]) q.after(50, () => void batcher.submit(n));
    q.after(50, () => {
      queueMicrotask(() => {
        callsAtWakeEnd = calls.length; // microtasks run right after the wake's timer callback
      });
    });
    await fake.advance(100);
    expect(callsAtWakeEnd).toBe(1);
    expect(calls).toEqual([[1, 2, 3]]);
  });
});
