import { type Lease, type Lock, offsetClock, realClock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario, LockScenarioOptions } from '../types.js';
import {
  describeResult,
  fireNear,
  leaseFor,
  pollUntil,
  using,
  waitUntilTime,
  wonLease,
} from '../util.js';
import { clients, req } from './helpers.js';

/**
 * Claims fresh fires `firstFireAt`, `firstFireAt + 1`, ... until one is won (the previous
 * exclusive lease expired by the backend's clock); every attempt before must be `busy`.
 */
export async function claimUntilWon(
  lock: Lock,
  options: LockScenarioOptions,
  key: string,
  firstFireAt: number,
  owner: string,
  leaseMs: number,
  waitMs: number,
): Promise<Lease> {
  const scale = options.timeScale ?? 1;
  let fireAt = firstFireAt;
  return pollUntil(
    async () => {
      const result = await lock.claim(req(key, fireAt++, owner, leaseMs));
      if (result.status === 'won') return result.lease;
      expect(
        result.status,
        `a fresh fire while the old lease may live: ${describeResult(result)}`,
      ).toBe('busy');
      return undefined;
    },
    {
      timeoutMs: (waitMs + 10_000) * scale,
      intervalMs: 100 * scale,
      message: `a fresh fire of ${key} to be won once the previous lease expired`,
    },
  );
}

/** Grace after a lease's `expiresAt` before the suite expects the backend to treat it as expired. */
function expiryGrace(options: LockScenarioOptions): number {
  return (1000 + options.capabilities.leaseGranularityMs) * (options.timeScale ?? 1);
}

/** Scenario 9: an unreleased lease expires; the next fire is won by another owner. */
export const leaseExpiryHandsOver: LockScenario = {
  title: 'lease expiry lets the next fire be won by another owner',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = await clients(fixture, 2);
      const key = 'expiry';
      const leaseMs = leaseFor(options.capabilities, 1500);
      const t = fireNear(-10_000);
      const crashed = wonLease(await a!.claim(req(key, t, 'a', leaseMs)), 'first holder');
      expect((await b!.claim(req(key, t + 1, 'b', leaseMs))).status, 'live lease: busy').toBe(
        'busy',
      );
      const next = await claimUntilWon(b!, options, key, t + 2, 'b', leaseMs, leaseMs);
      expect(next.token, 'the new holder has a higher token').toBeGreaterThan(crashed.token);
      expect(await a!.extend(crashed, leaseMs), 'the old holder cannot extend').toBeNull();
      expect(await a!.release(crashed), 'the old holder cannot release').toBe(false);
      expect((await b!.inspect(key)).leases.map((l) => l.token)).toEqual([next.token]);
    });
  },
};

/** Scenario 10: extend pushes expiry for the owner; after expiry or takeover it returns null. */
export const extendOwnerOnly: LockScenario = {
  title: 'extend by the owner pushes expiry; extend after expiry or after takeover returns null',
  timeoutMs: 45_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = await clients(fixture, 2);
      const key = 'extend';
      const short = leaseFor(options.capabilities, 2000);
      // Outlives the wait for the short lease's expiry (its grace grows with the granularity).
      const long = leaseFor(options.capabilities, short + expiryGrace(options) + 4000);
      const t = fireNear(-10_000);
      const held = wonLease(await a!.claim(req(key, t, 'a', short)), 'holder');
      const key2 = 'extend-expired';
      const lapsed = wonLease(await a!.claim(req(key2, t, 'a', short)), 'holder of key 2');
      const extended = await a!.extend(held, long);
      expect(extended, 'the owner extends a live lease').not.toBeNull();
      expect(extended).toMatchObject({ key, fireAt: t, owner: 'a', token: held.token });
      expect(extended!.expiresAt).toBeGreaterThan(held.expiresAt);

      await waitUntilTime(
        Math.max(held.expiresAt, lapsed.expiresAt) + expiryGrace(options),
        'the original expiry to pass',
      );
      expect(await a!.extend(lapsed, long), 'extend after expiry').toBeNull();
      wonLease(
        await b!.claim(req(key2, t + 1, 'b', short)),
        'a lease that failed to extend is not live',
      );
      expect(
        (await b!.claim(req(key, t + 1, 'b', short))).status,
        'the extended lease outlives its original expiry',
      ).toBe('busy');

      const taken = await claimUntilWon(b!, options, key, t + 2, 'b', short, long);
      expect(await a!.extend(extended!, long), 'extend after takeover').toBeNull();
      expect((await b!.inspect(key)).leases.map((l) => l.token)).toEqual([taken.token]);
    });
  },
};

/** Scenario 11: releasing with an old token never touches the newer holder. */
export const staleReleaseIgnored: LockScenario = {
  title: 'a stale release (old token) does not touch the newer holder',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = await clients(fixture, 2);
      const key = 'stale-release';
      const lease = leaseFor(options.capabilities, 20_000);
      const t = fireNear(-10_000);
      const old = wonLease(await a!.claim(req(key, t, 'a', lease)), 'old holder');
      expect(await a!.release(old)).toBe(true);
      const newer = wonLease(await b!.claim(req(key, t + 1000, 'b', lease)), 'newer holder');
      expect(await a!.release(old), 'a release with the old token').toBe(false);
      expect(
        (await b!.inspect(key)).leases.map((l) => l.token),
        'the newer lease survives a stale release',
      ).toEqual([newer.token]);
      expect(
        (await a!.claim(req(key, t + 2000, 'a', lease))).status,
        'the newer lease still excludes',
      ).toBe('busy');
      expect(await b!.extend(newer, lease), 'the newer holder still extends').not.toBeNull();
      expect(await b!.release(newer)).toBe(true);
    });
  },
};

/** Scenario 12: tokens strictly increase per key across owners, lease kinds and client restarts. */
export const tokensIncrease: LockScenario = {
  title: 'tokens strictly increase per key across owners and client restarts',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const key = 'tokens';
      const lease = leaseFor(options.capabilities, 20_000);
      const base = fireNear(-60_000);
      const seen: number[] = [];
      for (let round = 0; round < 4; round++) {
        const lock = await fixture.newLock();
        for (let i = 0; i < 5; i++) {
          const owner = `owner-${(round + i) % 3}`;
          const fireAt = base + (round * 5 + i) * 1000;
          const held = wonLease(
            await lock.claim(req(key, fireAt, owner, lease, i % 2 === 0)),
            owner,
          );
          seen.push(held.token);
          expect(await lock.release(held)).toBe(true);
        }
        await lock.close?.();
      }
      for (let i = 1; i < seen.length; i++) {
        expect(seen[i], `tokens ${seen.join(', ')} must strictly increase`).toBeGreaterThan(
          seen[i - 1]!,
        );
      }
    });
  },
};

/** Scenario 15: a client whose clock is 30 s off can neither steal a lease nor revive a fire. */
export const skewedClientCannotSteal: LockScenario = {
  title: 'a client whose clock is 30 s off cannot steal a live lease or revive a stale fire',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const honest = await fixture.newLock();
      const skewed = [
        ['+30 s', await fixture.newLock({ clock: offsetClock(realClock, 30_000) })],
        ['-30 s', await fixture.newLock({ clock: offsetClock(realClock, -30_000) })],
      ] as const;
      const key = 'skew';
      const lease = leaseFor(options.capabilities, 20_000);
      const t = fireNear(-40_000); // in the past even for the client 30 s behind
      const held = wonLease(await honest.claim(req(key, t, 'honest', lease)), 'honest holder');
      for (const [i, [label, lock]] of skewed.entries()) {
        const owner = `skewed${label}`;
        const next = await lock.claim(req(key, t + 1000 * (i + 1), owner, lease));
        expect(next.status, `client ${label} claiming a new fire during a live lease`).toBe('busy');
        expect(await lock.claim(req(key, t, owner, lease)), `client ${label}`).toMatchObject({
          status: 'lost',
          reason: 'claimed',
        });
      }
      expect(await honest.extend(held, lease), 'the honest lease is still held').not.toBeNull();
      expect((await honest.inspect(key)).leases.map((l) => l.token)).toEqual([held.token]);

      const margin = 5000 * (options.timeScale ?? 1);
      const windowed = [
        ['+30 s', await fixture.newLock({ windowMs: 3000, clock: offsetClock(realClock, 30_000) })],
        [
          '-30 s',
          await fixture.newLock({ windowMs: 3000, clock: offsetClock(realClock, -30_000) }),
        ],
      ] as const;
      for (const [label, lock] of windowed) {
        const stale = await lock.claim(req('skew-window', Date.now() - 3000 - margin, 'x', lease));
        expect(stale.status, `client ${label} claiming a stale fire`).toBe('lost');
        const early = await lock.claim(req('skew-window', Date.now() + 3000 + margin, 'x', lease));
        expect(early.status, `client ${label} claiming an early fire`).toBe('lost');
      }
    });
  },
};
