import type { ClaimRequest, ClaimResult, Lock, LockInspection } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario } from '../types.js';
import { fireNear, leaseFor, using, wonLease } from '../util.js';
import { catchUpReq } from './catch-up.js';
import {
  batchClaimerOf,
  claimInBatches,
  claimOneByOne,
  comparable,
  describeAnswer,
  expectNewTokensIncrease,
  expiryTolerance,
  leaseOf,
  reportNotApplicable,
  TokenRanks,
} from './claim-many-support.js';
import { clients, req } from './helpers.js';

/** What the cases of the mixed batch share. */
interface MixedContext {
  /** Client of owner `a` (it also sends the batch and the single claims). */
  a: Lock;
  /** Client of owner `b`. */
  b: Lock;
  leaseMs: number;
  /** A fire 30 s ago, inside the window. */
  t: number;
  /** The test's clock when the cases were built. */
  now: number;
}

/** One kind of fire in the mixed batch: the state of its key, then the requests on it. */
interface MixedCase {
  name: string;
  /** Puts the key in the case's state with single claims (run on both twin keys). */
  prepare?(key: string): Promise<void>;
  /** The case's requests on `key`, in order. */
  requests(key: string): ClaimRequest[];
  /** What single claims answer them (`won`, `busy`, `lost (reason)`): the oracle's own check. */
  expected: string[];
}

const MINUTE = 60_000;

/** The cases: every answer a claim can give, and requests of one key that see each other. */
function mixedCases(c: MixedContext, options: { timeScale?: number }): MixedCase[] {
  const { a, b, leaseMs: L, t, now } = c;
  const windowMs = a.windowMs;
  const { earlyToleranceMs, backendTimeBoundMs, durableMark } = a.capabilities;
  const won = async (lock: Lock, request: ClaimRequest, what: string) =>
    wonLease(await lock.claim(request), `preparing ${what}`);
  const cases: MixedCase[] = [
    { name: 'new-exclusive', expected: ['won'], requests: (k) => [req(k, t, 'a', L, true)] },
    { name: 'new-overlap', expected: ['won'], requests: (k) => [req(k, t, 'a', L, false)] },
    {
      name: 'own-live',
      expected: ['won'],
      prepare: async (k) => {
        await won(a, req(k, t, 'a', L, true), 'own-live');
      },
      requests: (k) => [req(k, t, 'a', L, true)],
    },
    {
      name: 'own-live-overlap',
      expected: ['won', 'won'],
      prepare: async (k) => {
        await won(a, req(k, t, 'a', L, false), 'own-live-overlap');
      },
      requests: (k) => [req(k, t, 'a', L, false), req(k, t + 1000, 'a', L, false)],
    },
    {
      name: 'own-busy',
      expected: ['busy'],
      prepare: async (k) => {
        await won(b, req(k, t - 1000, 'b', L, true), 'own-busy');
        expect((await a.claim(req(k, t, 'a', L, true))).status, 'preparing own-busy').toBe('busy');
      },
      requests: (k) => [req(k, t, 'a', L, true)],
    },
    {
      name: 'own-released',
      expected: ['lost (claimed)'],
      prepare: async (k) => {
        const lease = await won(a, req(k, t, 'a', L, false), 'own-released');
        expect(await a.release(lease), 'preparing own-released').toBe(true);
      },
      requests: (k) => [req(k, t, 'a', L, false)],
    },
    {
      name: 'claimed-by-other',
      expected: ['lost (claimed)', 'lost (claimed)'],
      prepare: async (k) => {
        await won(b, req(k, t, 'b', L, true), 'claimed-by-other');
      },
      requests: (k) => [req(k, t, 'a', L, true), req(k, t, 'a', L, false)],
    },
    {
      name: 'busy',
      expected: ['busy', 'won'],
      prepare: async (k) => {
        await won(b, req(k, t - 1000, 'b', L, true), 'busy');
      },
      requests: (k) => [req(k, t, 'a', L, true), req(k, t + 1000, 'a', L, false)],
    },
    {
      name: 'stale',
      expected: ['lost (stale)', 'lost (stale)'],
      requests: (k) => [
        req(k, now - windowMs - MINUTE, 'a', L, true),
        req(k, now - windowMs - MINUTE + 1000, 'a', L, false),
      ],
    },
    {
      name: 'early',
      expected:
        earlyToleranceMs === undefined ? ['lost (early)'] : ['lost (early)', 'lost (early)'],
      requests: (k) => [
        req(k, now + windowMs + MINUTE, 'a', L, true),
        ...(earlyToleranceMs === undefined
          ? []
          : [
              req(
                k,
                now +
                  earlyToleranceMs +
                  (backendTimeBoundMs ?? 0) +
                  10_000 * (options.timeScale ?? 1),
                'a',
                L,
                false,
              ),
            ]),
      ],
    },
    {
      name: 'same-key-in-batch',
      expected: ['won', 'lost (claimed)', 'won', 'busy', 'won'],
      requests: (k) => [
        req(k, t, 'a', L, true),
        req(k, t, 'b', L, true),
        req(k, t, 'a', L, true),
        req(k, t + 1000, 'b', L, true),
        req(k, t + 2000, 'b', L, false),
      ],
    },
  ];
  if (durableMark === undefined) return cases;
  const since = now - 30 * MINUTE;
  return [
    ...cases,
    {
      name: 'catch-up-new',
      expected: ['won', 'lost (behind_mark)', 'won'],
      requests: (k) => [
        catchUpReq(k, now - 20 * MINUTE, 'a', L, since),
        catchUpReq(k, now - 25 * MINUTE, 'b', L, since),
        catchUpReq(k, now - 20 * MINUTE, 'a', L, since),
      ],
    },
    {
      name: 'catch-up-behind-mark',
      expected: ['lost (behind_mark)'],
      prepare: async (k) => {
        await won(a, req(k, t, 'a', L, false), 'catch-up-behind-mark');
      },
      requests: (k) => [catchUpReq(k, t - MINUTE, 'a', L, since)],
    },
    {
      name: 'catch-up-ahead-of-mark',
      expected: ['won'],
      prepare: async (k) => {
        await won(b, req(k, t - 20_000, 'b', L, false), 'catch-up-ahead-of-mark');
      },
      requests: (k) => [catchUpReq(k, t - 10_000, 'a', L, since, true)],
    },
    {
      name: 'catch-up-resent',
      expected: ['won'],
      prepare: async (k) => {
        await won(a, catchUpReq(k, t - 10_000, 'a', L, since), 'catch-up-resent');
      },
      requests: (k) => [catchUpReq(k, t - 10_000, 'a', L, since)],
    },
    {
      name: 'catch-up-stale',
      expected: ['lost (stale)'],
      requests: (k) => [catchUpReq(k, now - 40 * MINUTE, 'a', L, since)],
    },
    {
      name: 'catch-up-after-ordinary',
      expected: ['won', 'lost (behind_mark)'],
      requests: (k) => [req(k, t, 'a', L, false), catchUpReq(k, t - 2000, 'b', L, since)],
    },
  ];
}

/** Round-robin over the cases' lists, each list's order kept. */
function interleave<T>(lists: T[][]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let i = 0; i < longest; i++) {
    for (const list of lists) if (i < list.length) out.push(list[i]!);
  }
  return out;
}

/** `won`, `busy` or `lost (reason)`. */
const label = (r: ClaimResult) => (r.status === 'lost' ? `lost (${r.reason})` : r.status);

/** Every token in an inspection, for {@link TokenRanks}. */
function tokensIn(seen: LockInspection): number[] {
  const fires = seen.fires.flatMap((f) => (f.token === null ? [] : [f.token]));
  return [...fires, ...seen.leases.map((l) => l.token)];
}

/**
 * Scenario: one batch mixing new, own (live, busy, released; exclusive and per-fire), foreign,
 * busy, stale, early and catch-up (with `durableMark`: new, ahead of and behind the mark,
 * re-sent, stale) fires over many keys, and requests of one key that see each
 * other, answers each exactly as single claims would. The oracle: the same requests sent one by
 * one to twin keys prepared the same way. Compared per request: status, reason, owner,
 * exclusive, fire, token ranks per key (a re-send gets the prepared token, a new lease a higher
 * one), lease expiry within a tolerance and `backendTime`; afterwards the twins' claim records,
 * leases and marks.
 */
export const claimManyMatchesSingleClaims: LockScenario = {
  title:
    'claimMany: a mixed batch (new, own, foreign, busy, stale, early, catch-up) answers each request as single claims do',
  timeoutMs: 60_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = (await clients(fixture, 2)) as [Lock, Lock];
      const claimer = batchClaimerOf(a);
      if (!claimer) return reportNotApplicable(options, a);
      const leaseMs = leaseFor(a.capabilities, 60_000);
      const context = { a, b, leaseMs, t: fireNear(-30_000), now: Date.now() };
      const cases = mixedCases(context, options);
      const twin = (name: string, side: 'batch' | 'single') => `mixed ${name} (${side})`;
      const preparedFrom = Date.now();
      for (const c of cases) {
        await c.prepare?.(twin(c.name, 'batch'));
        await c.prepare?.(twin(c.name, 'single'));
      }
      const ranks = { batch: new TokenRanks(), single: new TokenRanks() };
      const known = {
        batch: new Map<string, Set<number>>(),
        single: new Map<string, Set<number>>(),
      };
      for (const c of cases) {
        for (const side of ['batch', 'single'] as const) {
          const key = twin(c.name, side);
          const tokens = tokensIn(await a.inspect(key));
          known[side].set(key, new Set(tokens));
          for (const token of tokens) ranks[side].add(key, token);
        }
      }

      const batchRequests = interleave(cases.map((c) => c.requests(twin(c.name, 'batch'))));
      const singleRequests = interleave(cases.map((c) => c.requests(twin(c.name, 'single'))));
      const sentAt = Date.now();
      const batched = await claimInBatches(claimer, batchRequests);
      const answeredAt = Date.now();
      const single = await claimOneByOne(a, singleRequests);
      const finishedAt = Date.now();

      expect(
        single.map(label),
        'single claims (the oracle) answer each kind of fire as the contract says',
      ).toEqual(interleave(cases.map((c) => c.expected)));
      expectNewTokensIncrease(batched, known.batch, 'claimMany');
      expectNewTokensIncrease(single, known.single, 'single claims');
      for (const [side, answers] of [
        ['batch', batched],
        ['single', single],
      ] as const) {
        for (const answer of answers) {
          const lease = leaseOf(answer);
          if (lease) ranks[side].add(lease.key, lease.token);
        }
      }
      // twin leases were granted at most (finishedAt - preparedFrom) apart
      const tolerance = expiryTolerance(options, a) + (finishedAt - preparedFrom);
      batchRequests.forEach((request, i) => {
        const got = batched[i]!;
        const want = single[i]!;
        const what = `request ${i} (${request.key} @ ${request.fireAt}, owner ${request.owner}${request.catchUp ? ', catch-up' : ''}): claimMany answered ${describeAnswer(got)}, a single claim ${describeAnswer(want)}`;
        expect(comparable(got), what).toEqual(comparable(want));
        expectSameLease(got, want, request, singleRequests[i]!, ranks, tolerance, what);
        if (typeof want.backendTime === 'number') {
          expect(got.backendTime, `${what}: carries backendTime like a single claim`).toBeTypeOf(
            'number',
          );
          const bound = (a.capabilities.backendTimeBoundMs ?? 0) + tolerance;
          expect(got.backendTime!, `${what}: backendTime taken during the call`).toBeGreaterThan(
            sentAt - bound,
          );
          expect(got.backendTime!).toBeLessThan(answeredAt + bound);
        }
      });

      for (const c of cases) {
        const keys = [twin(c.name, 'batch'), twin(c.name, 'single')] as const;
        const [got, want] = await Promise.all(keys.map((key) => a.inspect(key)));
        for (const token of tokensIn(got!)) ranks.batch.add(keys[0], token);
        for (const token of tokensIn(want!)) ranks.single.add(keys[1], token);
        const oldest = Date.now() - a.windowMs + MINUTE; // records past the window may be collected
        const shape = (seen: LockInspection, key: string, side: 'batch' | 'single') => ({
          fires: seen.fires
            .filter((f) => f.fireAt >= oldest)
            .map((f) => ({ ...f, token: ranks[side].rank(key, f.token) })),
          leases: seen.leases.map((l) => ({
            fireAt: l.fireAt,
            owner: l.owner,
            exclusive: l.exclusive,
            token: ranks[side].rank(key, l.token),
          })),
          mark: seen.mark,
        });
        expect(
          shape(got!, keys[0], 'batch'),
          `case ${c.name}: after the batch, the key holds what single claims left on its twin`,
        ).toEqual(shape(want!, keys[1], 'single'));
      }
    });
  },
};

/** Compares the leases of two `won` answers: key, token rank per key, expiry. */
function expectSameLease(
  got: ClaimResult,
  want: ClaimResult,
  batchRequest: ClaimRequest,
  singleRequest: ClaimRequest,
  ranks: { batch: TokenRanks; single: TokenRanks },
  tolerance: number,
  what: string,
): void {
  const gotLease = leaseOf(got);
  const wantLease = leaseOf(want);
  if (!gotLease || !wantLease) return;
  expect(gotLease.key, `${what}: the lease names the request's key`).toBe(batchRequest.key);
  expect(
    ranks.batch.rank(gotLease.key, gotLease.token),
    `${what}: token ${gotLease.token} must stand among the key's tokens where the single claim's token ${wantLease.token} stands (same lease re-sent, or a new higher token)`,
  ).toBe(ranks.single.rank(singleRequest.key, wantLease.token));
  expect(
    Math.abs(gotLease.expiresAt - wantLease.expiresAt),
    `${what}: lease expiry ${gotLease.expiresAt} vs ${wantLease.expiresAt} (tolerance ${tolerance} ms)`,
  ).toBeLessThanOrEqual(tolerance);
}
