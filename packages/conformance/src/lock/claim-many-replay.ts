import type { ClaimRequest, ClaimResult, Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario } from '../types.js';
import { fireNear, leaseFor, using, wonLease } from '../util.js';
import { catchUpReq } from './catch-up.js';
import {
  type BatchClaimer,
  batchClaimerOf,
  claimInBatches,
  describeAnswer,
  reportNotApplicable,
} from './claim-many-support.js';
import { clients, req } from './helpers.js';

/** What must be equal between an answer and the same request's answer re-sent. */
function replayShape(result: ClaimResult): Record<string, unknown> {
  if (result.status === 'won') {
    const { key, fireAt, owner, token, exclusive } = result.lease;
    return { status: 'won', key, fireAt, owner, token, exclusive };
  }
  if (result.status === 'busy') return { status: 'busy', key: result.key, fireAt: result.fireAt };
  return { status: 'lost', key: result.key, fireAt: result.fireAt, reason: result.reason };
}

/**
 * Scenario: a batch re-sent after a lost reply (the same batch twice on one connection, then on
 * another connection of the same owner) gets the same answers: the same leases and tokens, busy
 * stays busy, lost stays lost; nothing is recorded twice and no second lease appears. The same
 * fires sent by another owner are all lost.
 */
export const claimManyResentBatch: LockScenario = {
  title: 'claimMany: a batch re-sent (lost reply) returns the same leases and tokens',
  timeoutMs: 45_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a1, a2, b] = (await clients(fixture, 3)) as [Lock, Lock, Lock];
      const first = batchClaimerOf(a1);
      if (!first) return reportNotApplicable(options, a1);
      const second = batchClaimerOf(a2) as BatchClaimer;
      const L = leaseFor(a1.capabilities, 60_000);
      const t = fireNear(-30_000);
      wonLease(await b.claim(req('resend taken', t, 'b', L)), 'preparing a fire of another owner');
      const batch: ClaimRequest[] = [
        req('resend x', t, 'a', L, true),
        req('resend o', t, 'a', L, false),
        req('resend x', t + 1000, 'a', L, true), // busy: the first item's lease is live
        req('resend o', t + 1000, 'a', L, false),
        req('resend taken', t, 'a', L, true),
        req('resend stale', t - a1.windowMs - 60_000, 'a', L, true),
      ];
      const answers = await claimInBatches(first, batch);
      expect(
        answers.map((r) => r.status),
        'the batch as first sent',
      ).toEqual(['won', 'won', 'busy', 'won', 'lost', 'lost']);
      for (const [via, claimer] of [
        ['the same connection', first],
        ['another connection of the same owner', second],
      ] as const) {
        const again = await claimInBatches(claimer, batch);
        batch.forEach((request, i) => {
          expect(
            replayShape(again[i]!),
            `re-sent via ${via}, request ${i} (${request.key} @ ${request.fireAt}): first ${describeAnswer(answers[i])}, again ${describeAnswer(again[i])}`,
          ).toEqual(replayShape(answers[i]!));
        });
      }
      const tokens = answers.flatMap((r) => (r.status === 'won' ? [r.lease.token] : []));
      const live: number[] = [];
      for (const key of ['resend x', 'resend o']) {
        const seen = await b.inspect(key);
        expect(seen.fires, `${key}: one claim record per fire`).toHaveLength(2);
        live.push(...seen.leases.map((l) => l.token));
      }
      const ascending = (x: number, y: number) => x - y;
      expect(live.sort(ascending), 're-sending creates no second lease').toEqual(
        tokens.sort(ascending),
      );

      const foreign = batch.slice(0, 4).map((r) => ({ ...r, owner: 'b' }));
      const lost = await claimInBatches(batchClaimerOf(b) as BatchClaimer, foreign);
      for (const [i, r] of lost.entries()) {
        expect(r, `another owner sending the same fires, request ${i}`).toMatchObject({
          status: 'lost',
          reason: 'claimed',
        });
      }
    });
  },
};

/**
 * Scenario: requests of one key inside one batch are applied in array order, so each sees the
 * ones before it: a second exclusive fire is `busy` behind the first one's lease (and a later
 * fire first in the array takes the lease instead), another owner's request of a fire claimed
 * earlier in the batch is `lost (claimed)` and the first owner's repeat gets the same lease,
 * tokens increase in array order, and (with `durableMark`) a catch-up claim behind a fire claimed
 * earlier in the batch is `lost (behind_mark)`.
 */
export const claimManySameKeyInOrder: LockScenario = {
  title: 'claimMany: requests of one key inside a batch are applied in order',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a] = (await clients(fixture, 1)) as [Lock];
      const claimer = batchClaimerOf(a);
      if (!claimer) return reportNotApplicable(options, a);
      const L = leaseFor(a.capabilities, 60_000);
      const t = fireNear(-30_000);
      const now = Date.now();
      const catchUp = a.capabilities.durableMark !== undefined;
      const since = now - 30 * 60_000;
      const batch: ClaimRequest[] = [
        req('order x', t, 'a', L, true),
        req('order x', t + 1000, 'b', L, true),
        req('order x', t, 'b', L, true),
        req('order x', t, 'a', L, true),
        req('order y', t + 1000, 'b', L, true),
        req('order y', t, 'a', L, true),
        req('order z', t, 'a', L, false),
        req('order z', t + 2000, 'b', L, false),
        req('order z', t + 1000, 'c', L, false),
        ...(catchUp
          ? [
              catchUpReq('order m', now - 20 * 60_000, 'a', L, since),
              catchUpReq('order m', now - 25 * 60_000, 'b', L, since),
            ]
          : []),
      ];
      // Split only if the lock takes fewer than the whole batch (each key's items stay in order).
      const answers = await claimInBatches(claimer, batch);
      const expected = [
        'won',
        'busy',
        'lost (claimed)',
        'won',
        'won',
        'busy',
        'won',
        'won',
        'won',
        ...(catchUp ? ['won', 'lost (behind_mark)'] : []),
      ];
      expect(
        answers.map((r) => (r.status === 'lost' ? `lost (${r.reason})` : r.status)),
        `answers in order: ${answers.map(describeAnswer).join('; ')}`,
      ).toEqual(expected);
      const token = (i: number) => wonLease(answers[i]!, `request ${i}`).token;
      expect(token(3), 'the owner repeating its request in the batch gets the same lease').toBe(
        token(0),
      );
      expect(token(7), 'tokens increase in array order').toBeGreaterThan(token(6));
      expect(token(8), 'tokens increase in array order').toBeGreaterThan(token(7));
      const seen = await a.inspect('order y');
      expect(
        seen.fires.map((f) => [f.fireAt, f.owner, f.outcome]),
        'the later fire, first in the array, took the lease',
      ).toEqual([
        [t, 'a', 'busy'],
        [t + 1000, 'b', 'won'],
      ]);
    });
  },
};
