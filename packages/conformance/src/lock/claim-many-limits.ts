import { type ClaimRequest, isFleetcronError, type Lease, type Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario } from '../types.js';
import { fireNear, leaseFor, spyOnCrashes, using, wonLease } from '../util.js';
import { catchUpReq } from './catch-up.js';
import {
  type BatchClaimer,
  batchClaimerOf,
  claimInBatches,
  describeAnswer,
  expiryTolerance,
  releaseInBatches,
  reportNotApplicable,
} from './claim-many-support.js';
import { clients, req } from './helpers.js';

const EMPTY = { leases: [], newestFireAt: null, fires: [], mark: null };

/** The rejection of `call` (a synchronous throw counts), or `null` when it resolves. */
async function rejectionOf(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
    return null;
  } catch (error) {
    return error;
  }
}

/** Asserts `error` is a fleetcron error with `code`. */
function expectCode(error: unknown, code: string, what: string): void {
  expect(
    isFleetcronError(error) && error.code === code,
    `${what}: expected a ${code} error, got ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
  ).toBe(true);
}

/**
 * Scenario: a batch whose `BatchOptions.signal` is aborted before the call rejects with
 * `BACKEND_UNAVAILABLE` and records nothing, not even after a later call on the same client
 * (nothing queued); the same batch without a signal then wins every fire. Aborted
 * `extendMany` / `releaseMany` (when present) reject the same way and leave the leases as they
 * were. An empty batch answers `[]`; a batch over `maxBatch` is refused with `INVALID_OPTION`
 * naming `requests` (checked when `maxBatch` is at most 10,000) and records nothing.
 */
export const claimManyRefusals: LockScenario = {
  title:
    'claimMany: an aborted signal rejects BACKEND_UNAVAILABLE and records nothing; [] answers []; over maxBatch is refused',
  timeoutMs: 45_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = (await clients(fixture, 2)) as [Lock, Lock];
      const claimer = batchClaimerOf(a);
      if (!claimer) return reportNotApplicable(options, a);
      const crashes = spyOnCrashes();
      try {
        const L = leaseFor(a.capabilities, 60_000);
        const t = fireNear(-30_000);
        const now = Date.now();
        const batch: ClaimRequest[] = [
          req('aborted x', t, 'a', L, true),
          req('aborted o', t, 'a', L, false),
          ...(a.capabilities.durableMark === undefined
            ? []
            : [catchUpReq('aborted m', now - 20 * 60_000, 'a', L, now - 30 * 60_000)]),
        ].slice(0, claimer.maxBatch);
        const aborted = AbortSignal.abort(new Error('the caller gave up'));
        expectCode(
          await rejectionOf(() => claimer.claimMany(batch, { signal: aborted })),
          'BACKEND_UNAVAILABLE',
          'claimMany with an aborted signal',
        );
        // A later call on the same client runs after anything the client might have queued.
        wonLease((await claimer.claimMany([req('after abort', t, 'a', L)]))[0]!, 'a later batch');
        for (const r of batch) {
          expect(await b.inspect(r.key), `${r.key}: an aborted batch records nothing`).toEqual(
            EMPTY,
          );
        }
        const answers = await claimer.claimMany(batch);
        const leases = answers.map((r, i) =>
          wonLease(r, `request ${i} sent again without a signal (${describeAnswer(r)})`),
        );
        await expectAbortedRenewalsChangeNothing(
          a,
          b,
          leases,
          aborted,
          expiryTolerance(options, a),
        );

        expect(await claimer.claimMany([]), 'an empty batch answers []').toEqual([]);
        await expectOversizeRefused(claimer, b, L, t);
        expect(crashes.caught, 'no unhandled rejection or uncaught exception').toEqual([]);
      } finally {
        crashes.dispose();
      }
    });
  },
};

/** Aborted `extendMany` / `releaseMany` (when present) reject and leave the leases as they were. */
async function expectAbortedRenewalsChangeNothing(
  a: Lock,
  b: Lock,
  leases: Lease[],
  signal: AbortSignal,
  tolerance: number,
): Promise<void> {
  const leasesOf = async () =>
    (await Promise.all(leases.map(async (l) => (await b.inspect(l.key)).leases))).flat();
  const before = await leasesOf();
  const extendMany = a.extendMany;
  if (typeof extendMany === 'function') {
    const ms = leases.map(() => leaseFor(a.capabilities, 10 * tolerance + 120_000));
    expectCode(
      await rejectionOf(() => extendMany.call(a, leases, ms, { signal })),
      'BACKEND_UNAVAILABLE',
      'extendMany with an aborted signal',
    );
  }
  const releaseMany = a.releaseMany;
  if (typeof releaseMany === 'function') {
    expectCode(
      await rejectionOf(() => releaseMany.call(a, leases, { signal })),
      'BACKEND_UNAVAILABLE',
      'releaseMany with an aborted signal',
    );
  }
  const after = await leasesOf();
  const what = 'aborted extendMany/releaseMany leave the leases as they were';
  const withoutExpiry = (list: Lease[]) => list.map(({ expiresAt, backendTime, ...l }) => l);
  expect(withoutExpiry(after), what).toEqual(withoutExpiry(before));
  after.forEach((lease, i) => {
    const shift = Math.abs(lease.expiresAt - before[i]!.expiresAt);
    expect(shift, `${what}: expiry of ${lease.key} moved`).toBeLessThanOrEqual(tolerance);
  });
}

/** A batch of `maxBatch + 1` requests is refused naming `requests`, and records nothing. */
async function expectOversizeRefused(
  claimer: BatchClaimer,
  reader: Lock,
  leaseMs: number,
  t: number,
): Promise<void> {
  if (claimer.maxBatch > 10_000) return;
  const over = Array.from({ length: claimer.maxBatch + 1 }, (_, i) =>
    req('oversize', t - i, 'a', leaseMs, false),
  );
  const error = await rejectionOf(() => claimer.claimMany(over));
  expectCode(error, 'INVALID_OPTION', `a batch of maxBatch + 1 = ${over.length} requests`);
  expect((error as { field?: string }).field, 'the error names the field').toBe('requests');
  expect(await reader.inspect('oversize'), 'a refused batch records nothing').toEqual(EMPTY);
}

/** Keys of the 1,000-key scenario: plain, with `/`, and with `{}` (Redis Cluster hash tags). */
const BULK_KEYS = Array.from({ length: 1000 }, (_, i) =>
  i % 10 === 0 ? `bulk/{${i}}` : i % 10 === 5 ? `bulk {x${i % 7}} ${i}` : `bulk ${i}`,
);

/**
 * Scenario: 1,000 keys (on Redis Cluster: every slot owner) claimed in batches of at most
 * `maxBatch`: every fire won once; the batches re-sent get the same tokens; another owner's
 * batches of the same fires all lose; after release, the next fire of every key is won by the
 * other owner with a higher token. Claim records checked on every 25th key.
 */
export const claimManyThousandKeys: LockScenario = {
  title:
    'claimMany: 1,000 keys in batches of at most maxBatch: won once, re-sent the same, lost to others, next fire higher token',
  timeoutMs: 180_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const [a, b] = (await clients(fixture, 2)) as [Lock, Lock];
      const claimerA = batchClaimerOf(a);
      if (!claimerA) return reportNotApplicable(options, a);
      const claimerB = batchClaimerOf(b) as BatchClaimer;
      const L = leaseFor(a.capabilities, 120_000);
      const t = fireNear(-30_000);
      const fires = (owner: string, fireAt: number) =>
        BULK_KEYS.map((key, i) => req(key, fireAt, owner, L, i % 2 === 0));
      const toLeases = (answers: Awaited<ReturnType<typeof claimInBatches>>, what: string) =>
        answers.map((r, i) => wonLease(r, `${what}, ${BULK_KEYS[i]}`));

      const first = toLeases(await claimInBatches(claimerA, fires('a', t)), '1,000 new fires');
      const again = toLeases(await claimInBatches(claimerA, fires('a', t)), 'the batches re-sent');
      expect(
        again.map((l) => l.token),
        're-sent batches answer the same tokens',
      ).toEqual(first.map((l) => l.token));
      const others = await claimInBatches(claimerB, fires('b', t));
      others.forEach((r, i) => {
        expect(r, `another owner, ${BULK_KEYS[i]}`).toMatchObject({
          status: 'lost',
          reason: 'claimed',
        });
      });
      for (let i = 0; i < BULK_KEYS.length; i += 25) {
        const seen = await b.inspect(BULK_KEYS[i]!);
        expect(seen.fires, `${BULK_KEYS[i]}: one record`).toEqual([
          { fireAt: t, owner: 'a', outcome: 'won', token: first[i]!.token },
        ]);
        expect(seen.leases.map((l) => l.token)).toEqual([first[i]!.token]);
      }
      expect(await releaseInBatches(a, first, claimerA.maxBatch), 'a releases all').toEqual(
        first.map(() => true),
      );
      const next = toLeases(await claimInBatches(claimerB, fires('b', t + 1000)), 'next fires');
      next.forEach((lease, i) => {
        expect(lease.token, `${BULK_KEYS[i]}: the next fire's token is higher`).toBeGreaterThan(
          first[i]!.token,
        );
      });
      expect(await releaseInBatches(b, next, claimerB.maxBatch)).toEqual(next.map(() => true));
    });
  },
};
