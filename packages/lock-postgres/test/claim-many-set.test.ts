import type { ClaimRequest, ClaimResult, Lock } from '@fleetcron/core';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { lockFixtures } from './fixture.js';

// The batch claim function's set-based path (every key once, no catch-up claim: what the
// scheduler sends) answers each request as a single claim does. The conformance scenario
// claimManyMatchesSingleClaims names keys twice, so it checks the per-request path; this file
// checks the set-based one, kind by kind, on twin keys, and the state each leaves behind.

const databaseUrl = postgresDatabase();
const create = lockFixtures(databaseUrl);

const MINUTE = 60_000;
const LEASE_MS = 30_000;

/** A claim request of `owner`. */
function req(key: string, fireAt: number, owner: string, exclusive: boolean, leaseMs = LEASE_MS) {
  return { key, fireAt, owner, leaseMs, exclusive } satisfies ClaimRequest;
}

/** A case: the key's state made with single claims, then the one request the batch sends. */
interface SetCase {
  name: string;
  prepare?(lock: Lock, key: string): Promise<void>;
  request(key: string): ClaimRequest;
  expected: string;
}

async function won(lock: Lock, request: ClaimRequest) {
  const result = await lock.claim(request);
  if (result.status !== 'won') throw new Error(`preparing ${request.key}: ${result.status}`);
  return result.lease;
}

function cases(t: number, now: number, windowMs: number): SetCase[] {
  return [
    { name: 'new-exclusive', expected: 'won', request: (k) => req(k, t, 'a', true) },
    { name: 'new-per-fire', expected: 'won', request: (k) => req(k, t, 'a', false) },
    {
      name: 'own-live-exclusive',
      expected: 'won',
      prepare: async (lock, k) => void (await won(lock, req(k, t, 'a', true))),
      request: (k) => req(k, t, 'a', true),
    },
    {
      name: 'own-live-per-fire',
      expected: 'won',
      prepare: async (lock, k) => void (await won(lock, req(k, t, 'a', false))),
      request: (k) => req(k, t, 'a', false),
    },
    {
      name: 'own-busy',
      expected: 'busy',
      prepare: async (lock, k) => {
        await won(lock, req(k, t - 1000, 'b', true));
        expect((await lock.claim(req(k, t, 'a', true))).status).toBe('busy');
      },
      request: (k) => req(k, t, 'a', true),
    },
    {
      name: 'own-released-per-fire',
      expected: 'lost (claimed)',
      prepare: async (lock, k) => {
        expect(await lock.release(await won(lock, req(k, t, 'a', false)))).toBe(true);
      },
      request: (k) => req(k, t, 'a', false),
    },
    {
      name: 'own-released-exclusive',
      expected: 'lost (claimed)',
      prepare: async (lock, k) => {
        expect(await lock.release(await won(lock, req(k, t, 'a', true)))).toBe(true);
      },
      request: (k) => req(k, t, 'a', true),
    },
    {
      name: 'claimed-by-other',
      expected: 'lost (claimed)',
      prepare: async (lock, k) => void (await won(lock, req(k, t, 'b', true))),
      request: (k) => req(k, t, 'a', false),
    },
    {
      name: 'busy',
      expected: 'busy',
      prepare: async (lock, k) => void (await won(lock, req(k, t - 1000, 'b', true))),
      request: (k) => req(k, t, 'a', true),
    },
    {
      name: 'per-fire-beside-live-exclusive',
      expected: 'won',
      prepare: async (lock, k) => void (await won(lock, req(k, t - 1000, 'b', true))),
      request: (k) => req(k, t, 'a', false),
    },
    {
      name: 'exclusive-after-expired-exclusive',
      expected: 'won',
      // a 1 ms lease: expired long before the batch (the other cases' preparation comes between)
      prepare: async (lock, k) => void (await won(lock, req(k, t - 1000, 'b', true, 1))),
      request: (k) => req(k, t, 'a', true),
    },
    {
      name: 'next-fire-higher-token',
      expected: 'won',
      prepare: async (lock, k) => {
        await won(lock, req(k, t - 2000, 'a', false));
        await won(lock, req(k, t - 1000, 'b', false));
      },
      request: (k) => req(k, t, 'a', true),
    },
    {
      name: 'stale',
      expected: 'lost (stale)',
      request: (k) => req(k, now - windowMs - MINUTE, 'a', true),
    },
    { name: 'early', expected: 'lost (early)', request: (k) => req(k, now + MINUTE, 'a', false) },
    {
      name: 'near-future-recorded',
      expected: 'lost (claimed)',
      // recorded while it was not early for the backend (within the 250 ms tolerance)
      prepare: async (lock, k) => void (await won(lock, req(k, now + 200, 'b', false))),
      request: (k) => req(k, now + 200, 'a', false),
    },
  ];
}

/** An answer as text (`won`, `busy`, `lost (reason)`). */
const describeAnswer = (r: ClaimResult): string =>
  r.status === 'lost' ? `lost (${r.reason})` : r.status;

/** An answer without what depends on the moment it was judged. */
function comparable(r: ClaimResult): unknown {
  if (r.status !== 'won') return describeAnswer(r);
  return { token: r.lease.token, exclusive: r.lease.exclusive, owner: r.lease.owner };
}

describe('PostgresLock.claimMany, set-based path', () => {
  it('answers every kind of request as single claims do, and leaves the same state', async () => {
    const fixture = await create();
    try {
      const lock = await fixture.newLock();
      const now = Date.now();
      const all = cases(now - 30_000, now, lock.windowMs);
      for (const c of all) {
        await c.prepare?.(lock, `single:${c.name}`);
        await c.prepare?.(lock, `batch:${c.name}`);
      }
      const singles: ClaimResult[] = [];
      for (const c of all) singles.push(await lock.claim(c.request(`single:${c.name}`)));
      // reversed: the batch is not sent in key order
      const batch = [...all].reverse().map((c) => c.request(`batch:${c.name}`));
      const answers = (await lock.claimMany?.(batch)) ?? [];
      const batched = [...answers].reverse();
      expect(batched).toHaveLength(all.length);
      for (const [i, c] of all.entries()) {
        const single = singles[i] as ClaimResult;
        const inBatch = batched[i] as ClaimResult;
        expect(describeAnswer(single), `${c.name}: single claim`).toBe(c.expected);
        expect(comparable(inBatch), c.name).toEqual(comparable(single));
        if (inBatch.status === 'won' && single.status === 'won') {
          expect(Math.abs(inBatch.lease.expiresAt - single.lease.expiresAt), c.name).toBeLessThan(
            LEASE_MS / 3,
          );
          const { leases } = await lock.inspect(inBatch.lease.key);
          const held = leases.find((lease) => lease.token === inBatch.lease.token);
          expect(held?.expiresAt, `${c.name}: the lease the lock holds`).toBe(
            inBatch.lease.expiresAt,
          );
        }
        const state = async (key: string) => {
          const seen = await lock.inspect(key);
          return {
            fires: seen.fires,
            mark: seen.mark,
            leases: seen.leases.map(({ expiresAt: _, key: __, ...lease }) => lease),
          };
        };
        expect(await state(`batch:${c.name}`), `${c.name}: state`).toEqual(
          await state(`single:${c.name}`),
        );
      }
    } finally {
      await fixture.close();
    }
  });

  it('keys and owners with separators, quotes, braces, backslashes and U+0000 are answered in place', async () => {
    const fixture = await create();
    try {
      const lock = await fixture.newLock();
      const fireAt = Date.now() - 1000;
      const keys = [
        'a,b',
        'c;d',
        '"q"',
        '{x,y}',
        'back\\slash',
        'nul\u0000key',
        "it's",
        'NULL',
        '',
      ];
      const owner = 'own;er,"1"\\';
      const results =
        (await lock.claimMany?.(keys.map((key) => req(key, fireAt, owner, false)))) ?? [];
      expect(
        results.map((r) => (r.status === 'won' ? [r.lease.key, r.lease.owner] : r.status)),
      ).toEqual(keys.map((key) => [key, owner]));
      const again =
        (await lock.claimMany?.(keys.map((key) => req(key, fireAt, 'other', false)))) ?? [];
      expect(again.map(describeAnswer)).toEqual(keys.map(() => 'lost (claimed)'));
      for (const key of keys) expect((await lock.inspect(key)).fires, key).toHaveLength(1);
    } finally {
      await fixture.close();
    }
  });

  it('two owners batching the same 300 fires at once, in different orders: one winner each', async () => {
    const fixture = await create();
    try {
      const locks = [await fixture.newLock(), await fixture.newLock(), await fixture.newLock()];
      for (let round = 0; round < 4; round++) {
        const fireAt = Date.now() - 100 - round;
        const keys = Array.from({ length: 300 }, (_, i) => `set-race-${round}-${i}`);
        const orders = [keys, [...keys].reverse(), [...keys.slice(150), ...keys.slice(0, 150)]];
        const results = await Promise.all(
          locks.map((lock, n) =>
            lock.claimMany?.(
              (orders[n] ?? keys).map((key) => req(key, fireAt, `owner-${n}`, round % 2 === 0)),
            ),
          ),
        );
        const winners = new Map<string, number>();
        for (const r of results.flat()) {
          if (r?.status === 'won') winners.set(r.lease.key, (winners.get(r.lease.key) ?? 0) + 1);
        }
        expect(winners.size, `round ${round}`).toBe(keys.length);
        expect(
          [...winners.values()].every((n) => n === 1),
          `round ${round}`,
        ).toBe(true);
      }
    } finally {
      await fixture.close();
    }
  });
});
