import { describe, expect, it } from 'vitest';
import { type BatchOptions, FakeClock } from '../../src/index.js';
import { Batcher } from '../../src/scheduler/lock-calls/batcher.js';

/** A batcher over a fake call whose batches the test answers by hand; flushes when told. */
function setup(size = 3, maxInFlight?: number) {
  const clock = new FakeClock();
  const calls: {
    items: number[];
    signal: AbortSignal | undefined;
    answer: (r: unknown) => void;
  }[] = [];
  let flushes: Array<() => void> = [];
  const batcher = new Batcher<number, string>({
    ...{ size, clock, name: 'testMany' },
    call: (items: number[], options: BatchOptions) =>
      new Promise((resolve) => {
        calls.push({ items, signal: options.signal, answer: resolve as (r: unknown) => void });
      }),
    defer: (flush) => flushes.push(flush),
    ...(maxInFlight ? { maxInFlight } : {}),
  });
  const flush = () => {
    const pending = flushes;
    flushes = [];
    for (const f of pending) f();
  };
  return { clock, batcher, calls, flush, flushesPending: () => flushes.length };
}

describe('Batcher', () => {
  it('coalesces items submitted before the flush into batches of at most size, each answered on its own', async () => {
    const t = setup(3);
    const sent = [1, 2, 3, 4, 5].map((n) => t.batcher.submit(n));
    expect(t.flushesPending()).toBe(1); // one flush for all of them
    await t.clock.advance(7); // the send time is the flush's
    t.flush();
    expect(t.calls.map((c) => c.items)).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    const items = await Promise.all(sent);
    expect(items.map((s) => s?.sentAt)).toEqual([7, 7, 7, 7, 7]);
    t.calls[1]?.answer(['d', 'e']); // the second batch answers first
    expect(await items[4]?.answer).toBe('e');
    t.calls[0]?.answer(['a', 'b', 'c']);
    expect(await Promise.all(items.map((s) => s?.answer))).toEqual(['a', 'b', 'c', 'd', 'e']);
    t.batcher.submit(6);
    expect(t.flushesPending()).toBe(1); // a later submit schedules a new flush
  });

  it('drops an item given up before its batch leaves (aborted signal, or not wanted at flush)', async () => {
    const t = setup(10);
    const gone = new AbortController();
    const a = t.batcher.submit(1, gone.signal);
    let wanted = true;
    const b = t.batcher.submit(2, undefined, () => wanted);
    const c = t.batcher.submit(3);
    gone.abort();
    wanted = false;
    t.flush();
    expect(await a).toBeNull();
    expect(await b).toBeNull();
    expect(t.calls.map((call) => call.items)).toEqual([[3]]);
    expect(await c).not.toBeNull();
  });

  it("aborts a batch's signal only when every member gave up", async () => {
    const t = setup(10);
    const members = [0, 1, 2].map(() => new AbortController());
    const sent = members.map((m, i) => t.batcher.submit(i, m.signal));
    t.flush();
    const signal = t.calls[0]?.signal;
    members[0]?.abort();
    members[1]?.abort();
    expect(signal?.aborted).toBe(false); // one member still waits for the answer
    members[2]?.abort();
    expect(signal?.aborted).toBe(true);
    // a member that gave up still gets its (late) answer, to hand a late win back
    t.calls[0]?.answer(['x', 'y', 'z']);
    expect(await (await sent[0])?.answer).toBe('x');
  });

  it('rejects every member when the call fails or answers the wrong number of results', async () => {
    const t = setup(10);
    const sent = [1, 2].map((n) => t.batcher.submit(n));
    t.flush();
    t.calls[0]?.answer(['only one']);
    for (const s of await Promise.all(sent)) {
      await expect(s?.answer).rejects.toThrow(/testMany answered 1 answers for 2 requests/);
    }
    const thrown = new Batcher<number, string>({
      ...{ size: 5, clock: t.clock, name: 'boomMany' },
      call: () => {
        throw new Error('boom');
      },
      defer: (flush) => flush(),
    });
    const item = await thrown.submit(1);
    await expect(item?.answer).rejects.toThrow('boom');
  });

  it('keeps at most maxInFlight batches in flight; the next leaves when one is answered or given up on', async () => {
    const t = setup(2, 2);
    const gaveUp = [new AbortController(), new AbortController()];
    const sent = [1, 2, 3, 4, 5, 6, 7, 8].map((n, i) => t.batcher.submit(n, gaveUp[i]?.signal));
    t.flush();
    expect(t.calls.map((c) => c.items)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(t.batcher.queued).toBe(4);
    expect(t.batcher.sending).toBe(2);
    await t.clock.advance(5);
    t.calls[1]?.answer(['c', 'd']);
    await expect.poll(() => t.calls.length).toBe(3);
    expect(t.calls[2]?.items).toEqual([5, 6]);
    expect((await sent[4])?.sentAt).toBe(5); // sent when it left, not when it was submitted
    // every member of the first batch gives up (a hung call): its slot is freed
    for (const g of gaveUp) g.abort();
    await expect.poll(() => t.calls.length).toBe(4);
    expect(t.calls[3]?.items).toEqual([7, 8]);
    expect(t.batcher.queued).toBe(0);
  });
});
