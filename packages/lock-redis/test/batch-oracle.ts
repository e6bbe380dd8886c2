import type { ClaimRequest, ClaimResult, Lock } from '@fleetcron/core';
import { expect } from 'vitest';

/**
 * The claimMany oracle: the same mixed batch applied twice, once with `claimMany` on keys
 * `batch:<job>` and once as single claims (in array order) on twin keys `single:<job>`, after
 * the same preparation on both. Every answer must match (status, reason, lease shape, and the
 * same token where the single claim replays an earlier one), and so must what `inspect` reads.
 */
export interface OracleCase {
  /** Requests made on both twins before the batch (single claims), keyed by job name. */
  prepare: Omit<ClaimRequest, 'key'>[];
  /** The job (twin) and request of one batch entry. */
  request: Omit<ClaimRequest, 'key'>;
  job: string;
}

/** A claim answer with the fields that may differ between twins (key, time) taken out. */
export function comparable(result: ClaimResult, tokens: Map<string, string>): unknown {
  if (result.status === 'won') {
    const { lease } = result;
    return {
      status: 'won',
      fireAt: lease.fireAt,
      owner: lease.owner,
      exclusive: lease.exclusive,
      // Tokens are per key and time-based: compare which earlier claim's token it repeats.
      token: tokens.get(`${lease.key}|${lease.token}`) ?? 'new',
      leaseMs: lease.expiresAt - (result.backendTime ?? 0) > 0 ? 'live' : 'ended',
    };
  }
  if (result.status === 'busy') return { status: 'busy', fireAt: result.fireAt };
  return { status: 'lost', fireAt: result.fireAt, reason: result.reason };
}

/** Runs the cases on `lock` (batch) and `singleLock` (single claims) and compares everything. */
export async function expectBatchMatchesSingles(
  lock: Lock,
  singleLock: Lock,
  cases: OracleCase[],
): Promise<ClaimResult[]> {
  // Tokens by `key|token` (tokens are per key: two jobs may get the same one).
  const batchTokens = new Map<string, string>();
  const singleTokens = new Map<string, string>();
  const jobs = [...new Set(cases.map((c) => c.job))];
  for (const c of cases) {
    for (const [i, prep] of c.prepare.entries()) {
      const label = `${c.job}#${i}`;
      const a = await lock.claim({ ...prep, key: `batch:${c.job}` });
      const b = await singleLock.claim({ ...prep, key: `single:${c.job}` });
      expect(comparable(a, batchTokens), `preparation ${label}`).toEqual(
        comparable(b, singleTokens),
      );
      if (a.status === 'won') batchTokens.set(`${a.lease.key}|${a.lease.token}`, label);
      if (b.status === 'won') singleTokens.set(`${b.lease.key}|${b.lease.token}`, label);
    }
  }
  const batch = await lock.claimMany!(cases.map((c) => ({ ...c.request, key: `batch:${c.job}` })));
  expect(batch).toHaveLength(cases.length);
  for (const [i, c] of cases.entries()) {
    const single = await singleLock.claim({ ...c.request, key: `single:${c.job}` });
    const got = batch[i]!;
    expect(comparable(got, batchTokens), `request ${i} (${c.job})`).toEqual(
      comparable(single, singleTokens),
    );
    if (got.status === 'won') {
      expect(got.lease.key).toBe(`batch:${c.job}`);
      batchTokens.set(`${got.lease.key}|${got.lease.token}`, `request ${i}`);
    } else {
      expect(got.key).toBe(`batch:${c.job}`);
    }
    if (single.status === 'won') {
      singleTokens.set(`${single.lease.key}|${single.lease.token}`, `request ${i}`);
    }
  }
  for (const job of jobs) {
    const a = await lock.inspect(`batch:${job}`);
    const b = await singleLock.inspect(`single:${job}`);
    const shape = (seen: typeof a, key: string, tokens: Map<string, string>) => ({
      mark: seen.mark,
      fires: seen.fires.map((f) => ({
        fireAt: f.fireAt,
        owner: f.owner,
        outcome: f.outcome,
        token: f.token === null ? null : (tokens.get(`${key}|${f.token}`) ?? 'unknown'),
      })),
      leases: seen.leases.map((l) => ({ fireAt: l.fireAt, owner: l.owner, x: l.exclusive })),
    });
    expect(shape(a, `batch:${job}`, batchTokens), `inspect ${job}`).toEqual(
      shape(b, `single:${job}`, singleTokens),
    );
  }
  return batch;
}

/** A batch mixing every kind of answer, relative to `now` (ms), for {@link expectBatchMatchesSingles}. */
export function mixedCases(now: number, windowMs: number): OracleCase[] {
  const base = { leaseMs: 30_000, exclusive: true };
  const claim = (fireAt: number, owner: string, more: Partial<ClaimRequest> = {}) => ({
    ...base,
    fireAt,
    owner,
    ...more,
  });
  const t = now - 1_000;
  return [
    { job: 'new', prepare: [], request: claim(t, 'me') },
    { job: 'new-shared', prepare: [], request: claim(t, 'me', { exclusive: false }) },
    { job: 'claimed', prepare: [claim(t, 'other')], request: claim(t, 'me') },
    { job: 'replay', prepare: [claim(t, 'me')], request: claim(t, 'me') },
    {
      job: 'replay-shared',
      prepare: [claim(t, 'me', { exclusive: false })],
      request: claim(t, 'me', { exclusive: false }),
    },
    { job: 'busy', prepare: [claim(t - 5_000, 'other')], request: claim(t, 'me') },
    {
      job: 'replay-busy',
      prepare: [claim(t - 5_000, 'other'), claim(t, 'me')],
      request: claim(t, 'me'),
    },
    { job: 'stale', prepare: [], request: claim(now - windowMs - 60_000, 'me') },
    { job: 'early', prepare: [], request: claim(now + 60_000, 'me') },
    // Two requests of one job in one batch: the second sees the first (array order).
    { job: 'twice', prepare: [], request: claim(t - 2_000, 'me') },
    { job: 'twice', prepare: [], request: claim(t, 'me') },
    { job: 'twice', prepare: [], request: claim(t, 'other', { exclusive: false }) },
    { job: 'twice', prepare: [], request: claim(t - 2_000, 'me') },
    // Catch-up: newer than the mark wins; at or behind it is behind_mark; older than since stale.
    {
      job: 'catch-up',
      prepare: [claim(t - 20_000, 'other', { leaseMs: 1 })],
      request: claim(t - 10_000, 'me', { catchUp: { since: t - 60_000 } }),
    },
    {
      job: 'catch-up',
      prepare: [],
      request: claim(t - 15_000, 'me', { catchUp: { since: t - 60_000 } }),
    },
    {
      job: 'catch-up-old',
      prepare: [],
      request: claim(t - 90_000, 'me', { catchUp: { since: t - 60_000 } }),
    },
    {
      job: 'catch-up-resend',
      prepare: [claim(t - 10_000, 'me', { catchUp: { since: t - 60_000 } })],
      request: claim(t - 10_000, 'me', { catchUp: { since: t - 60_000 } }),
    },
  ];
}
