// A copy of packages/lock-sqlite/test/batch-oracle.ts (the two adapters run the same twin-key oracle).
import type { ClaimRequest, ClaimResult, Lock, LockInspection } from '@fleetcron/core';
import { expect } from 'vitest';

/**
 * claimMany against an oracle of single claims: every case is built twice, on a key and on its
 * twin (same setup through single claims), then the case's requests are sent as ONE batch on the
 * keys and as single claims, in the same order, on the twins. Answers and what the lock then
 * holds must be the same, with tokens compared by what they are: a setup lease's token again
 * (a re-send) or a new one above every setup token of the key.
 */
export interface TwinCase {
  name: string;
  /** Single claims made first, on the key and on its twin. */
  setup: ClaimRequest[];
  /** The requests under test (batched on the key, single on the twin). */
  requests: ClaimRequest[];
  /** The answers expected, one per request: `won:new`, `won:setup#0`, `busy`, `lost:stale`... */
  want: string[];
}

const A = 'owner-a';
const B = 'owner-b';
const LONG = 60_000;

/** The mixed cases: new, claimed, re-sent, busy, stale, early, catch-up, two fires of one key. */
export function mixedCases(options: {
  windowMs: number;
  leaseMs: number;
  prefix: string;
}): TwinCase[] {
  const { windowMs, leaseMs, prefix } = options;
  const base = Math.floor(Date.now() / 1000) * 1000 - 2_000;
  const r = (name: string, fireAt: number, owner: string, extra: Partial<ClaimRequest> = {}) =>
    ({
      key: `${prefix}${name}`,
      fireAt,
      owner,
      leaseMs,
      exclusive: true,
      ...extra,
    }) as ClaimRequest;
  const since = { since: base - 120_000 };
  const cases: [string, (name: string) => Omit<TwinCase, 'name'>][] = [
    ['new', (n) => ({ setup: [], requests: [r(n, base, A)], want: ['won:new'] })],
    [
      'new-per-fire',
      (n) => ({ setup: [], requests: [r(n, base, A, { exclusive: false })], want: ['won:new'] }),
    ],
    [
      'claimed',
      (n) => ({ setup: [r(n, base, B)], requests: [r(n, base, A)], want: ['lost:claimed'] }),
    ],
    [
      're-sent',
      (n) => ({ setup: [r(n, base, A)], requests: [r(n, base, A)], want: ['won:setup#0'] }),
    ],
    [
      're-sent-per-fire',
      (n) => ({
        setup: [r(n, base, A, { exclusive: false })],
        requests: [r(n, base, A, { exclusive: false })],
        want: ['won:setup#0'],
      }),
    ],
    [
      'busy',
      (n) => ({
        setup: [r(n, base - 1000, B, { leaseMs: LONG })],
        requests: [r(n, base, A)],
        want: ['busy'],
      }),
    ],
    [
      'busy-re-sent',
      (n) => ({
        setup: [r(n, base - 1000, B, { leaseMs: LONG }), r(n, base, A)],
        requests: [r(n, base, A)],
        want: ['busy'],
      }),
    ],
    [
      'per-fire-beside-exclusive',
      (n) => ({
        setup: [r(n, base - 1000, B, { leaseMs: LONG })],
        requests: [r(n, base, A, { exclusive: false })],
        want: ['won:new'],
      }),
    ],
    [
      'stale',
      (n) => ({ setup: [], requests: [r(n, base - windowMs - 60_000, A)], want: ['lost:stale'] }),
    ],
    [
      'early',
      (n) => ({ setup: [], requests: [r(n, Date.now() + 60_000, A)], want: ['lost:early'] }),
    ],
    [
      'catch-up-no-mark',
      (n) => ({
        setup: [],
        requests: [r(n, base - 60_000, A, { catchUp: since })],
        want: ['won:new'],
      }),
    ],
    [
      'catch-up-ahead-of-mark',
      (n) => ({
        setup: [r(n, base - 20_000, B, { exclusive: false })],
        requests: [r(n, base - 10_000, A, { catchUp: since })],
        want: ['won:new'],
      }),
    ],
    [
      'catch-up-behind-mark',
      (n) => ({
        setup: [r(n, base, B)],
        requests: [r(n, base - 5_000, A, { catchUp: since })],
        want: ['lost:behind_mark'],
      }),
    ],
    [
      'catch-up-stale',
      (n) => ({
        setup: [],
        requests: [r(n, base - 200_000, A, { catchUp: since })],
        want: ['lost:stale'],
      }),
    ],
    [
      'two-fires-of-one-key',
      (n) => ({
        setup: [],
        requests: [r(n, base, A), r(n, base - 1000, A), r(n, base, A)],
        want: ['won:new', 'busy', 'won:new'],
      }),
    ],
  ];
  return cases.map(([name, make]) => ({ name, ...make(name) }));
}

/** The same request on the twin key. */
const twin = (request: ClaimRequest): ClaimRequest => ({ ...request, key: `${request.key}~twin` });

/** A result with its key dropped and its token named by what it is (see {@link TwinCase}). */
function normalize(result: ClaimResult, setupTokens: number[]) {
  expect(typeof result.backendTime === 'number' || result.backendTime === undefined).toBe(true);
  if (result.status !== 'won') {
    return { ...result, key: undefined, backendTime: result.backendTime !== undefined };
  }
  const { lease } = result;
  const index = setupTokens.indexOf(lease.token);
  const token =
    index >= 0 ? `setup#${index}` : lease.token > Math.max(0, ...setupTokens) ? 'new' : 'older';
  return {
    status: 'won',
    fireAt: lease.fireAt,
    owner: lease.owner,
    exclusive: lease.exclusive,
    token,
    backendTime: result.backendTime !== undefined,
  };
}

/** What a lock holds for a key, tokens named as in {@link normalize}. */
function normalizeInspection(inspection: LockInspection, setupTokens: number[]) {
  const name = (token: number | null) =>
    token === null
      ? null
      : setupTokens.includes(token)
        ? `setup#${setupTokens.indexOf(token)}`
        : 'new';
  return {
    fires: inspection.fires.map((f) => ({ ...f, token: name(f.token) })),
    leases: inspection.leases.map((l) => ({
      fireAt: l.fireAt,
      owner: l.owner,
      exclusive: l.exclusive,
      token: name(l.token),
    })),
    mark: inspection.mark,
  };
}

/**
 * Runs `cases` as described on {@link TwinCase}: setups by single claims on `lock`, the batch by
 * `lock.claimMany`, the twins by `lock.claim`. Returns the batch's answers (for further checks).
 */
export async function expectBatchLikeSingles(
  lock: Lock,
  cases: TwinCase[],
): Promise<ClaimResult[]> {
  const claimMany = lock.claimMany?.bind(lock);
  if (!claimMany) throw new Error(`${lock.backend} has no claimMany`);
  const setupTokens = new Map<string, number[]>();
  for (const c of cases) {
    for (const request of c.setup) {
      for (const req of [request, twin(request)]) {
        const result = await lock.claim(req);
        const tokens = setupTokens.get(req.key) ?? [];
        if (result.status === 'won') tokens.push(result.lease.token);
        setupTokens.set(req.key, tokens);
      }
    }
  }
  const requests = cases.flatMap((c) => c.requests);
  const batch = await claimMany(requests);
  expect(batch).toHaveLength(requests.length);
  const singles: ClaimResult[] = [];
  for (const request of requests) singles.push(await lock.claim(twin(request)));
  requests.forEach((request, i) => {
    const name = cases.find((c) => c.requests.includes(request))?.name;
    const got = normalize(batch[i] as ClaimResult, setupTokens.get(request.key) ?? []);
    const want = normalize(singles[i] as ClaimResult, setupTokens.get(twin(request).key) ?? []);
    expect(got, `${name}: request ${i}`).toEqual(want);
  });
  for (const c of cases) {
    const got = c.requests.map((request) => {
      const result = batch[requests.indexOf(request)] as ClaimResult;
      const n = normalize(result, setupTokens.get(request.key) ?? []);
      return result.status === 'won'
        ? `won:${n.token}`
        : result.status === 'lost'
          ? `lost:${result.reason}`
          : 'busy';
    });
    expect(got, c.name).toEqual(c.want);
  }
  for (const c of cases) {
    const key = c.requests[0]?.key as string;
    const [held, twinHeld] = await Promise.all([lock.inspect(key), lock.inspect(`${key}~twin`)]);
    expect(normalizeInspection(held, setupTokens.get(key) ?? []), c.name).toEqual(
      normalizeInspection(twinHeld, setupTokens.get(`${key}~twin`) ?? []),
    );
  }
  return batch;
}
