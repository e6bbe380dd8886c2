import { DEFAULT_WINDOW_MS } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { LockScenario, LockScenarioOptions } from '../types.js';
import { describeResult, fireNear, leaseFor, using, wonLease } from '../util.js';
import { clients, req } from './helpers.js';

const EMPTY = { leases: [], newestFireAt: null, fires: [], mark: null };

/**
 * Scenario 1: `create()` gives fresh, isolated namespaces; every lock declares the same
 * capabilities (the ones the suite read from the first lock and adapts its timings to).
 */
export const freshIsolatedFixtures: LockScenario = {
  title: 'create() gives fresh isolated instances; every lock declares the same capabilities',
  timeoutMs: 30_000,
  async run(options: LockScenarioOptions) {
    const first = await options.create();
    try {
      await using(options.create, async (second) => {
        const [a, a2] = await clients(first, 2);
        const b = await second.newLock();
        for (const lock of [a!, a2!, b]) {
          expect(
            lock.capabilities,
            'every lock of every fixture declares the same capabilities (the suite reads them once)',
          ).toEqual(options.capabilities);
          expect(lock.windowMs, 'newLock() without windowMs uses the 5 minute default').toBe(
            DEFAULT_WINDOW_MS,
          );
          expect(typeof lock.backend).toBe('string');
          expect(lock.backend.length).toBeGreaterThan(0);
        }
        const windowed = await first.newLock({ windowMs: 2000 });
        expect(windowed.windowMs).toBe(2000);
        expect(windowed.capabilities, 'a lock with another window declares the same').toEqual(
          options.capabilities,
        );

        const key = 'isolation';
        const fireAt = fireNear(-10_000);
        const lease = leaseFor(options.capabilities, 20_000);
        expect(await a!.inspect(key), 'a fresh namespace holds nothing').toEqual(EMPTY);
        expect(await b.inspect(key), 'a fresh namespace holds nothing').toEqual(EMPTY);
        const won = wonLease(await a!.claim(req(key, fireAt, 'a', lease)), 'first claim');
        expect(Number.isSafeInteger(won.token), 'tokens are integers').toBe(true);
        expect(won).toMatchObject({ key, fireAt, owner: 'a', exclusive: true });

        // Same namespace, another connection: sees the claim.
        expect(await a2!.claim(req(key, fireAt, 'a2', lease))).toMatchObject({
          status: 'lost',
          reason: 'claimed',
        });
        const seen = await a2!.inspect(key);
        expect(seen.fires).toEqual([{ fireAt, owner: 'a', outcome: 'won', token: won.token }]);
        expect(seen.newestFireAt).toBe(fireAt);
        expect(seen.leases).toHaveLength(1);
        expect(seen.leases[0]).toMatchObject({ key, fireAt, owner: 'a', token: won.token });

        // Another fixture: sees nothing, and the same fire is new there.
        expect(await b.inspect(key), 'a second fixture must not see the first one').toEqual(EMPTY);
        wonLease(await b.claim(req(key, fireAt, 'b', lease)), 'same fire in another fixture');
        expect((await a!.inspect(key)).fires, 'the first fixture must not see the second').toEqual([
          { fireAt, owner: 'a', outcome: 'won', token: won.token },
        ]);
      });
    } finally {
      await first.close();
    }
  },
};

/** Scenario 2: 16 concurrent claimers over 200 fires: exactly one winner per fire. */
export const oneWinnerPerFire: LockScenario = {
  title: 'one winner per fire: 16 concurrent claimers over 200 fires, exact totals',
  timeoutMs: 120_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const locks = await clients(fixture, 16);
      const key = 'contended';
      const lease = leaseFor(options.capabilities, 20_000);
      const base = fireNear(-250_000); // 200 fires, none ahead of the clock
      let won = 0;
      let lost = 0;
      let busy = 0;
      let lastToken = 0;
      for (let i = 0; i < 200; i++) {
        const fireAt = base + i * 1000;
        const results = await Promise.all(
          locks.map((lock, c) => lock.claim(req(key, fireAt, `claimer-${c}`, lease))),
        );
        const winners = results.flatMap((r, c) => (r.status === 'won' ? [{ r, c }] : []));
        expect(
          winners.length,
          `fire ${i}: exactly one winner, got ${results.map(describeResult).join(', ')}`,
        ).toBe(1);
        for (const r of results) {
          if (r.status === 'won') won++;
          else if (r.status === 'busy') busy++;
          else {
            lost++;
            expect(r.reason, `fire ${i}: losers lose because the fire is claimed`).toBe('claimed');
          }
        }
        const winner = winners[0]!;
        if (winner.r.status !== 'won') throw new Error('unreachable');
        expect(winner.r.lease.token, 'tokens strictly increase').toBeGreaterThan(lastToken);
        lastToken = winner.r.lease.token;
        expect(await locks[winner.c]!.release(winner.r.lease), 'the winner releases').toBe(true);
      }
      expect({ won, lost, busy }).toEqual({ won: 200, lost: 200 * 15, busy: 0 });
    });
  },
};

/** Scenario 3: after the winner released, a late claimer (and the winner itself) gets `lost`. */
export const lateClaimerLoses: LockScenario = {
  title: 'a late claimer after the winner released gets lost (claimed)',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = await clients(fixture, 2);
      const lease = leaseFor(options.capabilities, 20_000);
      for (const exclusive of [true, false]) {
        const key = exclusive ? 'late-exclusive' : 'late-overlap';
        const fireAt = fireNear(-10_000);
        const held = wonLease(await a!.claim(req(key, fireAt, 'a', lease, exclusive)), 'winner');
        expect(await a!.release(held), 'release of a live lease resolves true').toBe(true);
        expect(
          await b!.claim(req(key, fireAt, 'b', lease, exclusive)),
          'a late claimer must not run a fire that already ran',
        ).toMatchObject({ status: 'lost', reason: 'claimed' });
        expect(
          await a!.claim(req(key, fireAt, 'a', lease, exclusive)),
          'the winner re-sending after release gets no second lease',
        ).toMatchObject({ status: 'lost', reason: 'claimed' });
        const seen = await b!.inspect(key);
        expect(seen.fires, 'release keeps the claim record').toEqual([
          { fireAt, owner: 'a', outcome: 'won', token: held.token },
        ]);
        expect(seen.leases).toEqual([]);
        expect(await a!.release(held), 'a second release resolves false').toBe(false);
      }
    });
  },
};

/** Scenario 4: claims inside the window may arrive in any order (no high-water mark). */
export const outOfOrderFires: LockScenario = {
  title: 'fires claimed out of order inside the window are each won once',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [fast, other, late] = await clients(fixture, 3);
      const key = 'out-of-order';
      const lease = leaseFor(options.capabilities, 20_000);
      const t = fireNear(-10_000);
      const order = [t + 3000, t, t + 1000, t + 2000];
      let lastToken = 0;
      for (const [i, fireAt] of order.entries()) {
        const lock = i === 0 ? fast! : other!;
        const held = wonLease(
          await lock.claim(req(key, fireAt, i === 0 ? 'fast' : 'other', lease)),
          `fire ${fireAt - t} ms after T, claimed after T+3000 (a high-water mark refuses it)`,
        );
        expect(held.token).toBeGreaterThan(lastToken);
        lastToken = held.token;
        expect(await lock.release(held)).toBe(true);
      }
      for (const fireAt of order) {
        expect(await late!.claim(req(key, fireAt, 'late', lease))).toMatchObject({
          status: 'lost',
          reason: 'claimed',
        });
      }
      const seen = await late!.inspect(key);
      expect(seen.fires.map((f) => f.fireAt)).toEqual([t, t + 1000, t + 2000, t + 3000]);
      expect(seen.newestFireAt).toBe(t + 3000);
    });
  },
};

/** Scenario 5: fires older than the window are stale; fires beyond it are early. */
export const staleAndEarly: LockScenario = {
  title: 'a fire older than the window is refused as stale, a fire far ahead as early',
  timeoutMs: 30_000,
  async run(options) {
    const margin = 5000 * (options.timeScale ?? 1);
    await using(options.create, async (fixture) => {
      const lease = leaseFor(options.capabilities, 20_000);
      const small = await fixture.newLock({ windowMs: 3000 });
      const key = 'window';
      const stale = Date.now() - 3000 - margin;
      const early = Date.now() + 3000 + margin;
      const inside = Date.now() - 1500;
      expect(await small.claim(req(key, stale, 'a', lease, false))).toMatchObject({
        status: 'lost',
        reason: 'stale',
      });
      expect(await small.claim(req(key, early, 'a', lease, false))).toMatchObject({
        status: 'lost',
        reason: 'early',
      });
      wonLease(await small.claim(req(key, inside, 'a', lease, false)), 'a fire inside the window');
      expect(
        (await small.inspect(key)).fires.map((f) => f.fireAt),
        'refused fires are not recorded',
      ).toEqual([inside]);

      const normal = await fixture.newLock();
      const key2 = 'default-window';
      const minute = 60_000;
      expect(
        await normal.claim(req(key2, Date.now() - DEFAULT_WINDOW_MS - minute, 'a', lease)),
      ).toMatchObject({ status: 'lost', reason: 'stale' });
      expect(
        await normal.claim(req(key2, Date.now() + DEFAULT_WINDOW_MS + minute, 'a', lease)),
      ).toMatchObject({ status: 'lost', reason: 'early' });
      wonLease(
        await normal.claim(req(key2, Date.now() - DEFAULT_WINDOW_MS + minute, 'a', lease)),
        'a fire 4 minutes old with the default 5 minute window',
      );
    });
  },
};

/** Scenario 7: leases of overlapping (non-exclusive) fires are independent. */
export const independentOverlappingLeases: LockScenario = {
  title: 'overlapping (exclusive: false) fires keep independent leases',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = await clients(fixture, 2);
      const key = 'overlap';
      const lease = leaseFor(options.capabilities, 20_000);
      const t = fireNear(-10_000);
      const first = wonLease(await a!.claim(req(key, t, 'a', lease, false)), 'first fire');
      const second = wonLease(
        await b!.claim(req(key, t + 1000, 'b', lease, false)),
        'an overlapping fire while the first still runs',
      );
      expect(second.token).toBeGreaterThan(first.token);
      const tokens = async () => (await a!.inspect(key)).leases.map((l) => l.token);
      expect(await tokens()).toEqual([first.token, second.token]);

      const extended = await a!.extend(first, leaseFor(options.capabilities, 30_000));
      expect(extended, 'extending the first lease').not.toBeNull();
      expect(extended!.token).toBe(first.token);
      expect(await tokens(), 'extending one lease leaves the other').toEqual([
        first.token,
        second.token,
      ]);
      expect(await a!.release(extended!)).toBe(true);
      expect(await tokens(), 'releasing one lease leaves the other').toEqual([second.token]);
      const renewed = await b!.extend(second, leaseFor(options.capabilities, 30_000));
      expect(renewed, 'the second lease is still held').not.toBeNull();
      expect(await b!.release(renewed!)).toBe(true);
      expect(await tokens()).toEqual([]);
      expect(await a!.release(first), 'a released lease cannot be released again').toBe(false);
    });
  },
};

/** Scenario 8: an exclusive claim during a live lease is `busy` for exactly one claimer. */
export const exclusiveBusyOnce: LockScenario = {
  title: 'an exclusive claim during a live lease gives exactly one busy, the rest lost',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const holder = await fixture.newLock();
      const others = await clients(fixture, 8);
      const key = 'busy';
      const lease = leaseFor(options.capabilities, 20_000);
      const t = fireNear(-10_000);
      const held = wonLease(await holder.claim(req(key, t, 'holder', lease)), 'holder');
      const results = await Promise.all(
        others.map((lock, i) => lock.claim(req(key, t + 1000, `other-${i}`, lease))),
      );
      const busyAt = results.flatMap((r, i) => (r.status === 'busy' ? [i] : []));
      expect(busyAt, `exactly one busy: ${results.map(describeResult).join(', ')}`).toHaveLength(1);
      for (const r of results) {
        if (r.status !== 'busy') expect(r).toMatchObject({ status: 'lost', reason: 'claimed' });
      }
      const busyOwner = `other-${busyAt[0]}`;
      const seen = await holder.inspect(key);
      expect(seen.fires).toEqual([
        { fireAt: t, owner: 'holder', outcome: 'won', token: held.token },
        { fireAt: t + 1000, owner: busyOwner, outcome: 'busy', token: null },
      ]);
      expect(
        seen.leases.map((l) => l.token),
        'busy leaves the live lease alone',
      ).toEqual([held.token]);
      expect(await holder.extend(held, lease)).not.toBeNull();
      expect(await holder.release(held)).toBe(true);
      const next = wonLease(
        await others[0]!.claim(req(key, t + 2000, 'other-0', lease)),
        'the next fire once the lease is released',
      );
      expect(next.token).toBeGreaterThan(held.token);
    });
  },
};

/** Scenario 13: a claim re-sent by the same owner returns the same answer and lease. */
export const replaySameLease: LockScenario = {
  title: 'the same claim re-sent by the same owner returns the same lease; busy stays busy',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a1, a2, b, c] = await clients(fixture, 4);
      const key = 'replay';
      const lease = leaseFor(options.capabilities, 20_000);
      const t = fireNear(-10_000);
      const held = wonLease(await a1!.claim(req(key, t, 'a', lease)), 'first claim');
      const same = { key, fireAt: t, owner: 'a', token: held.token, exclusive: true };
      for (const [via, lock] of [
        ['same client', a1!],
        ['another connection', a2!],
      ] as const) {
        const again = await lock.claim(req(key, t, 'a', lease));
        expect(again.status, `re-sent claim via ${via}`).toBe('won');
        if (again.status === 'won') expect(again.lease).toMatchObject(same);
      }
      const seen = await c!.inspect(key);
      expect(seen.fires).toHaveLength(1);
      expect(
        seen.leases.map((l) => l.token),
        're-sending creates no second lease',
      ).toEqual([held.token]);

      expect((await b!.claim(req(key, t + 1000, 'b', lease))).status).toBe('busy');
      expect((await b!.claim(req(key, t + 1000, 'b', lease))).status, 'busy re-sent').toBe('busy');
      expect(await c!.claim(req(key, t + 1000, 'c', lease))).toMatchObject({
        status: 'lost',
        reason: 'claimed',
      });

      expect(await a1!.release(held)).toBe(true);
      expect(
        await a2!.claim(req(key, t, 'a', lease)),
        'a re-sent claim after release gets no new lease',
      ).toMatchObject({ status: 'lost', reason: 'claimed' });

      const overlapKey = 'replay-overlap';
      const o = wonLease(await a1!.claim(req(overlapKey, t, 'a', lease, false)), 'overlap claim');
      const o2 = await a2!.claim(req(overlapKey, t, 'a', lease, false));
      expect(o2.status).toBe('won');
      if (o2.status === 'won') expect(o2.lease.token).toBe(o.token);
      expect((await c!.inspect(overlapKey)).leases).toHaveLength(1);
    });
  },
};
