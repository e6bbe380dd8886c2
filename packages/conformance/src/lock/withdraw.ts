import type { Lease, Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario } from '../types.js';
import { fireNear, leaseFor, using, wonLease } from '../util.js';
import { clients, req } from './helpers.js';
import { claimUntilWon } from './leases.js';

/** The claim record of `fireAt` as `lock.inspect` reports it, or `undefined`. */
async function recordOf(lock: Lock, key: string, fireAt: number) {
  return (await lock.inspect(key)).fires.find((f) => f.fireAt === fireAt);
}

/** The live lease tokens of `key`. */
async function liveTokens(lock: Lock, key: string): Promise<number[]> {
  return (await lock.inspect(key)).leases.map((l) => l.token);
}

/** Calls `lock.withdraw`, which this scenario only runs for locks that implement it. */
function withdraw(lock: Lock, lease: Lease): Promise<boolean> {
  if (!lock.withdraw) throw new Error('withdraw() disappeared from the lock');
  return lock.withdraw(lease);
}

/**
 * Scenario: `withdraw` hands a won claim back. Afterwards another owner can claim the fire and
 * gets a higher token; a withdraw with a stale or foreign token changes nothing; a withdraw never
 * removes a live lease of another token (the exclusive slot is shared by the job's fires).
 * Locks without `withdraw` (it is optional) only have that absence asserted.
 */
export const withdrawHandsBack: LockScenario = {
  title: 'withdraw hands a won claim back: claimable again with a higher token; other tokens kept',
  timeoutMs: 45_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = (await clients(fixture, 2)) as [Lock, Lock];
      if (typeof a.withdraw !== 'function') {
        expect(a.withdraw, 'withdraw is optional; this lock has none').toBeUndefined();
        return;
      }
      const leaseMs = leaseFor(options.capabilities, 30_000);
      const t = fireNear(-60_000);

      for (const exclusive of [false, true]) {
        const key = exclusive ? 'withdraw-x' : 'withdraw-f';
        const won = wonLease(await a.claim(req(key, t, 'a', leaseMs, exclusive)), 'first claim');

        const foreign = { ...won, token: won.token + 1 };
        expect(await withdraw(a, foreign), 'withdraw with a foreign token').toBe(false);
        expect(await withdraw(b, { ...won, token: won.token - 1 }), 'a stale token').toBe(false);
        expect(await recordOf(b, key, t), 'the record survives a foreign withdraw').toMatchObject({
          owner: 'a',
          outcome: 'won',
          token: won.token,
        });
        expect(await liveTokens(b, key), 'the lease survives a foreign withdraw').toEqual([
          won.token,
        ]);

        expect(await withdraw(a, won), 'withdraw of the won claim').toBe(true);
        expect(await recordOf(b, key, t), 'no claim record after withdraw').toBeUndefined();
        expect(await liveTokens(b, key), 'no lease after withdraw').toEqual([]);

        const again = wonLease(
          await b.claim(req(key, t, 'b', leaseMs, exclusive)),
          'another owner claiming the withdrawn fire',
        );
        expect(again.token, 'the new claim has a higher token').toBeGreaterThan(won.token);
        expect(await withdraw(a, won), 'withdrawing again, now stale').toBe(false);
        expect(await recordOf(a, key, t), "the new owner's record stays").toMatchObject({
          owner: 'b',
          token: again.token,
        });
        expect(await liveTokens(a, key), "the new owner's lease stays").toEqual([again.token]);
      }

      // The exclusive slot moved on to another fire's lease: withdrawing the old fire takes its
      // record back but leaves the live lease of the newer token alone.
      const key = 'withdraw-slot';
      const shortMs = leaseFor(options.capabilities, 1000);
      const old = wonLease(await a.claim(req(key, t, 'a', shortMs, true)), 'short exclusive');
      const newer = await claimUntilWon(b, options, key, t + 1, 'b', leaseMs, shortMs);
      expect(await withdraw(a, old), 'withdraw of the expired, unrun claim').toBe(true);
      expect(await recordOf(b, key, t), 'its record is gone').toBeUndefined();
      expect(await liveTokens(a, key), 'the live lease of the newer token stays').toEqual([
        newer.token,
      ]);
      expect(await b.extend(newer, leaseMs), 'and its holder can still extend it').not.toBeNull();
    });
  },
};
