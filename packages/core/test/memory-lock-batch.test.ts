import { describe, expect, it } from 'vitest';
import {
  type ClaimRequest,
  FakeClock,
  isFleetcronError,
  type Lease,
  MemoryLock,
} from '../src/index.js';
import { MEMORY_MAX_BATCH } from '../src/memory-lock.js';

const LEASE = 10_000;

/** Two locks on one clock with the same history: one answers batches, the other single claims. */
function twins() {
  const clock = new FakeClock();
  const batched = new MemoryLock({ clock });
  const single = new MemoryLock({ clock });
  return { clock, batched, single };
}

const req = (key: string, fireAt: number, owner: string, more: Partial<ClaimRequest> = {}) => ({
  ...{ key, fireAt, owner, leaseMs: LEASE, exclusive: true },
  ...more,
});

/** The same history on both locks: a claimed fire, a live exclusive lease, a mark. */
async function seed(lock: MemoryLock, now: number): Promise<void> {
  await lock.claim(req('taken', now, 'b'));
  await lock.claim(req('held', now - 1000, 'b'));
  await lock.claim(req('mine', now, 'a'));
  await lock.claim(req('marked', now - 1000, 'b'));
}

describe('MemoryLock.claimMany', () => {
  it('declares maxBatch and answers [] for an empty batch', async () => {
    const lock = new MemoryLock();
    expect(lock.capabilities.maxBatch).toBe(MEMORY_MAX_BATCH);
    expect(await lock.claimMany([])).toEqual([]);
  });

  it('answers a batch mixing new, claimed, busy, stale, early, re-sent and catch-up fires exactly as single claims', async () => {
    const { clock, batched, single } = twins();
    const now = clock.now();
    await seed(batched, now);
    await seed(single, now);
    const requests: ClaimRequest[] = [
      req('new', now, 'a'),
      req('taken', now, 'a'), // lost: claimed by b
      req('held', now, 'a'), // busy: b's exclusive lease is live
      req('stale', now - batched.windowMs - 1, 'a'),
      req('early', now + 60_000, 'a'),
      req('mine', now, 'a'), // re-sent by its owner: the same lease
      req('marked', now - 2000, 'a', { catchUp: { since: now - 10_000 } }), // behind the mark
      req('open', now, 'a', { exclusive: false }),
      req('twice', now, 'a'),
      req('twice', now, 'b'), // sees the request before it: lost
    ];
    const fromBatch = await batched.claimMany(requests);
    const fromSingles = [];
    for (const r of requests) fromSingles.push(await single.claim(r));
    expect(fromBatch).toEqual(fromSingles);
    expect(fromBatch.map((r) => (r.status === 'lost' ? r.reason : r.status))).toEqual([
      'won',
      'claimed',
      'busy',
      'stale',
      'early',
      'won',
      'behind_mark',
      'won',
      'won',
      'claimed',
    ]);
    for (const key of ['new', 'held', 'twice', 'marked']) {
      expect(await batched.inspect(key)).toEqual(await single.inspect(key));
    }
  });

  it('answers a re-sent batch with the same leases', async () => {
    const lock = new MemoryLock({ clock: new FakeClock() });
    const requests = [1, 2, 3].map((i) => req(`job-${i}`, Date.UTC(2026, 0, 1), 'a'));
    const first = await lock.claimMany(requests);
    const again = await lock.claimMany(requests);
    expect(again).toEqual(first);
    expect(first.every((r) => r.status === 'won')).toBe(true);
  });

  it('refuses a batch larger than maxBatch, naming requests, and applies none of it', async () => {
    const lock = new MemoryLock({ clock: new FakeClock() });
    const at = Date.UTC(2026, 0, 1);
    const requests = Array.from({ length: MEMORY_MAX_BATCH + 1 }, (_, i) => req(`k${i}`, at, 'a'));
    const error = await lock.claimMany(requests).catch((e: unknown) => e);
    expect(isFleetcronError(error) && error.code).toBe('INVALID_OPTION');
    expect(String(error)).toMatch(/requests/);
    expect((await lock.inspect('k0')).fires).toEqual([]);
  });

  it('refuses a batch with a bad catch-up request before applying any of it', async () => {
    const lock = new MemoryLock({ clock: new FakeClock() });
    const at = Date.UTC(2026, 0, 1);
    const bad = req('bad', at, 'a', { catchUp: { since: Number.NaN } });
    await expect(lock.claimMany([req('good', at, 'a'), bad])).rejects.toThrow(/catchUp\.since/);
    expect((await lock.inspect('good')).fires).toEqual([]);
  });

  it('rejects BACKEND_UNAVAILABLE for an aborted batch and records nothing', async () => {
    const lock = new MemoryLock({ clock: new FakeClock() });
    const at = Date.UTC(2026, 0, 1);
    const controller = new AbortController();
    controller.abort(new Error('gave up'));
    const error = await lock
      .claimMany([req('k', at, 'a')], { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(isFleetcronError(error) && error.code).toBe('BACKEND_UNAVAILABLE');
    expect((await lock.inspect('k')).fires).toEqual([]);
  });
});

describe('MemoryLock.extendMany and releaseMany', () => {
  async function leases() {
    const { clock, batched, single } = twins();
    const now = clock.now();
    const won: Lease[][] = [];
    for (const lock of [batched, single]) {
      const results = await lock.claimMany([
        req('a', now, 'a'),
        req('b', now, 'a'),
        req('c', now, 'a', { leaseMs: 1000 }),
      ]);
      won.push(results.map((r) => (r.status === 'won' ? r.lease : ({} as Lease))));
    }
    return { clock, batched, single, won: won as [Lease[], Lease[]] };
  }

  it('extendMany answers each lease as extend would (renewed, expired: null, foreign token: null)', async () => {
    const { clock, batched, single, won } = await leases();
    await clock.advance(2000); // c expired
    const forge = (l: Lease) => ({ ...l, token: l.token + 100 });
    const list = (w: Lease[]) => [w[0] as Lease, forge(w[1] as Lease), w[2] as Lease];
    const ms = [5000, 5000, 5000];
    const fromBatch = await batched.extendMany(list(won[0]), ms);
    const fromSingles = [];
    for (const [i, l] of list(won[1]).entries())
      fromSingles.push(await single.extend(l, ms[i] ?? 0));
    expect(fromBatch).toEqual(fromSingles);
    expect(fromBatch.map((l) => l?.expiresAt ?? null)).toEqual([clock.now() + 5000, null, null]);
    await expect(batched.extendMany(won[0], [1])).rejects.toThrow(/leaseMs/);
  });

  it('releaseMany answers each lease as release would, and keeps the claim records', async () => {
    const { clock, batched, single, won } = await leases();
    await clock.advance(2000);
    const fromBatch = await batched.releaseMany(won[0]);
    const fromSingles = [];
    for (const l of won[1]) fromSingles.push(await single.release(l));
    expect(fromBatch).toEqual(fromSingles);
    expect(fromBatch).toEqual([true, true, false]);
    expect((await batched.inspect('a')).fires).toHaveLength(1);
    expect(await batched.releaseMany(won[0])).toEqual([false, false, false]);
  });
});
