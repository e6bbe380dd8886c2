import type { ClaimRequest, ClaimResult, Lease, Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario } from '../types.js';
import { describeResult, fireNear, leaseFor, using } from '../util.js';
import {
  type BatchClaimer,
  batchClaimerOf,
  claimInBatches,
  leaseOf,
  releaseInBatches,
  reportNotApplicable,
} from './claim-many-support.js';
import { clients, req } from './helpers.js';

/** Keys each round is played on; even keys are exclusive. */
const KEYS = 24;
/** Rounds (one new fire per key each). */
const ROUNDS = 8;

/** Who sent what in one round, per key. */
type RoundAnswers = Map<string, { owner: string; result: ClaimResult }[]>;

/**
 * Scenario: two owners send overlapping batches of the same fires at the same time (in opposite
 * key orders, which deadlocks row-locking backends that lock in request order), while a third
 * owner sends single claims for some of those fires. Over several rounds: every fire is won
 * exactly once, all other claimers of it are answered `lost (claimed)`, tokens increase per key
 * across rounds, and the claim records name the winners.
 */
export const claimManyOverlappingBatches: LockScenario = {
  title:
    'claimMany: two owners sending overlapping batches concurrently (and a single claimer) never both win a fire',
  timeoutMs: 120_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b, c] = (await clients(fixture, 3)) as [Lock, Lock, Lock];
      const claimerA = batchClaimerOf(a);
      if (!claimerA) return reportNotApplicable(options, a);
      const claimerB = batchClaimerOf(b) as BatchClaimer;
      const leaseMs = leaseFor(a.capabilities, 60_000);
      const keys = Array.from({ length: KEYS }, (_, i) => `race ${i}`);
      const exclusive = (i: number) => i % 2 === 0;
      const base = fireNear(-60_000);
      const lastToken = new Map<string, number>();
      const winners = new Map<string, string>(); // `${key} @ ${fireAt}` -> owner

      for (let round = 0; round < ROUNDS; round++) {
        const fireAt = base + round * 1000;
        const batchOf = (owner: string, indexes: number[]): ClaimRequest[] =>
          indexes.map((i) => req(keys[i]!, fireAt, owner, leaseMs, exclusive(i)));
        const forA = batchOf('a', range(0, 18));
        const forB = batchOf('b', range(6, KEYS).reverse());
        const forC = batchOf('c', range(9, 15));
        const [answersA, answersB, answersC] = await Promise.all([
          claimInBatches(claimerA, forA),
          claimInBatches(claimerB, forB),
          Promise.all(forC.map((r) => c.claim(r))),
        ]);
        const byKey: RoundAnswers = new Map();
        for (const [requests, answers] of [
          [forA, answersA],
          [forB, answersB],
          [forC, answersC],
        ] as const) {
          requests.forEach((r, i) => {
            const list = byKey.get(r.key) ?? [];
            list.push({ owner: r.owner, result: answers[i]! });
            byKey.set(r.key, list);
          });
        }

        const won = new Map<string, Lease[]>([
          ['a', []],
          ['b', []],
          ['c', []],
        ]);
        for (const key of keys) {
          const answers = byKey.get(key)!;
          const said = answers.map((x) => `${x.owner}: ${describeResult(x.result)}`).join(', ');
          const wins = answers.filter((x) => x.result.status === 'won');
          expect(wins, `round ${round}, ${key}: exactly one winner (${said})`).toHaveLength(1);
          for (const x of answers) {
            if (x.result.status !== 'won') {
              expect(x.result, `round ${round}, ${key}: the others lose (${said})`).toMatchObject({
                status: 'lost',
                reason: 'claimed',
              });
            }
          }
          const lease = leaseOf(wins[0]!.result)!;
          expect(lease.owner, `round ${round}, ${key}: the lease names its winner`).toBe(
            wins[0]!.owner,
          );
          const previous = lastToken.get(key) ?? Number.NEGATIVE_INFINITY;
          expect(lease.token, `round ${round}, ${key}: tokens increase per key`).toBeGreaterThan(
            previous,
          );
          lastToken.set(key, lease.token);
          winners.set(`${key} @ ${fireAt}`, lease.owner);
          won.get(lease.owner)!.push(lease);
        }
        for (const [owner, lock] of [
          ['a', a],
          ['b', b],
          ['c', c],
        ] as const) {
          const released = await releaseInBatches(lock, won.get(owner)!, claimerA.maxBatch);
          expect(released, `round ${round}: ${owner} releases what it won`).toEqual(
            won.get(owner)!.map(() => true),
          );
        }
      }

      for (const key of keys) {
        const seen = await a.inspect(key);
        const recorded = seen.fires.map((f) => ({ fireAt: f.fireAt, owner: f.owner }));
        const expected = Array.from({ length: ROUNDS }, (_, round) => base + round * 1000).map(
          (fireAt) => ({ fireAt, owner: winners.get(`${key} @ ${fireAt}`) }),
        );
        expect(recorded, `${key}: one claim record per fire, naming its winner`).toEqual(expected);
        expect(seen.fires.every((f) => f.outcome === 'won')).toBe(true);
        expect(seen.leases, `${key}: every lease was released`).toEqual([]);
      }
    });
  },
};

/** The integers `from` (included) to `to` (excluded). */
function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
