import type { BatchOptions, ClaimRequest, ClaimResult, Lease, Lock } from '@fleetcron/core';
import { expect, TestRunner } from 'vitest';
import type { LockConformanceOptions } from '../types.js';

/** A lock's batched claim, bound to the lock, with the batch size it declares. */
export interface BatchClaimer {
  /** `capabilities.maxBatch` of the lock. */
  readonly maxBatch: number;
  /** `lock.claimMany`, bound. */
  claimMany(requests: readonly ClaimRequest[], options?: BatchOptions): Promise<ClaimResult[]>;
}

/**
 * The lock's batched claim when its capabilities declare `maxBatch`, or `null` when it declares
 * none (the claimMany scenarios do not apply). Fails when the declaration and the methods
 * disagree: `maxBatch` without `claimMany`, `claimMany` without `maxBatch` (the scheduler would
 * never use it), or a `maxBatch` that is not a positive integer.
 */
export function batchClaimerOf(lock: Lock): BatchClaimer | null {
  const { maxBatch } = lock.capabilities;
  if (maxBatch === undefined) {
    expect(
      lock.claimMany,
      `${lock.backend}: claimMany() is implemented but capabilities.maxBatch is not declared, so the scheduler never uses it; declare maxBatch (the most requests one call takes)`,
    ).toBeUndefined();
    return null;
  }
  expect(
    Number.isSafeInteger(maxBatch) && maxBatch >= 1,
    `${lock.backend}: capabilities.maxBatch must be a positive integer, got ${String(maxBatch)}`,
  ).toBe(true);
  const claimMany = lock.claimMany;
  if (typeof claimMany !== 'function') {
    throw new Error(
      `${lock.backend}: capabilities.maxBatch = ${maxBatch} is declared but claimMany() is missing; implement it or drop maxBatch`,
    );
  }
  return { maxBatch, claimMany: (requests, options) => claimMany.call(lock, requests, options) };
}

/**
 * Reports a claimMany scenario as not applicable to `lock`: the running vitest test is marked
 * skipped with a note naming the backend and why (default: no `capabilities.maxBatch`), so the
 * report shows it (never a silent pass). Outside a running test it only returns.
 */
export function reportNotApplicable(
  options: LockConformanceOptions,
  lock: Lock,
  why = 'declares no capabilities.maxBatch (no claimMany)',
): void {
  TestRunner.getCurrentTest()?.context.skip(
    `not applicable: ${options.name} (${lock.backend}) ${why}`,
  );
}

/** Sends `requests` through `claimMany` in chunks of at most `maxBatch`, one chunk at a time. */
export async function claimInBatches(
  claimer: BatchClaimer,
  requests: readonly ClaimRequest[],
): Promise<ClaimResult[]> {
  const results: ClaimResult[] = [];
  for (let i = 0; i < requests.length; i += claimer.maxBatch) {
    const chunk = requests.slice(i, i + claimer.maxBatch);
    const answers = await claimer.claimMany(chunk);
    expectAnswerPerRequest(chunk, answers);
    results.push(...answers);
  }
  return results;
}

/** Sends `requests` as single claims, one after the other (the oracle of the batch). */
export async function claimOneByOne(
  lock: Lock,
  requests: readonly ClaimRequest[],
): Promise<ClaimResult[]> {
  const results: ClaimResult[] = [];
  for (const request of requests) results.push(await lock.claim(request));
  return results;
}

/** Asserts `answers` holds one answer per request, for the request's key and fire, in order. */
export function expectAnswerPerRequest(
  requests: readonly ClaimRequest[],
  answers: readonly ClaimResult[],
): void {
  expect(Array.isArray(answers), 'claimMany answers an array').toBe(true);
  expect(answers.length, 'claimMany answers one result per request').toBe(requests.length);
  answers.forEach((answer, i) => {
    const request = requests[i]!;
    const at = answer.status === 'won' ? answer.lease : answer;
    expect(
      { key: at.key, fireAt: at.fireAt },
      `claimMany answer ${i} is for request ${i} (${request.key} @ ${request.fireAt}), in order`,
    ).toEqual({ key: request.key, fireAt: request.fireAt });
  });
}

/** Key and fire of a claim answer. */
export function fireOf(result: ClaimResult): { key: string; fireAt: number } {
  const at = result.status === 'won' ? result.lease : result;
  return { key: at.key, fireAt: at.fireAt };
}

/** The lease of a won answer, or `null`. */
export function leaseOf(result: ClaimResult): Lease | null {
  return result.status === 'won' ? result.lease : null;
}

/**
 * An answer with what a single claim and a batched one must agree on, the key left out
 * (twin keys differ) and the token left out (compared as ranks, see {@link TokenRanks}).
 */
export function comparable(result: ClaimResult): Record<string, unknown> {
  switch (result.status) {
    case 'won': {
      const { fireAt, owner, exclusive } = result.lease;
      return { status: 'won', fireAt, owner, exclusive };
    }
    case 'busy':
      return { status: 'busy', fireAt: result.fireAt };
    case 'lost':
      return { status: 'lost', fireAt: result.fireAt, reason: result.reason };
  }
}

/**
 * Tokens of one key, seen in order, mapped to ranks (0 for the lowest): twin keys may get
 * different token numbers (a backend may count tokens fleet-wide), but the same ranks.
 */
export class TokenRanks {
  private readonly byKey = new Map<string, Set<number>>();

  /** Records a token of `key`. */
  add(key: string, token: number | null): void {
    if (token === null) return;
    let tokens = this.byKey.get(key);
    if (!tokens) {
      tokens = new Set();
      this.byKey.set(key, tokens);
    }
    tokens.add(token);
  }

  /** The rank of `token` among the tokens recorded for `key`, or `null` for `null`. */
  rank(key: string, token: number | null): number | null {
    if (token === null) return null;
    const sorted = [...(this.byKey.get(key) ?? [])].sort((a, b) => a - b);
    const rank = sorted.indexOf(token);
    if (rank < 0) throw new Error(`token ${token} of ${key} was never recorded`);
    return rank;
  }
}

/**
 * Asserts that every token a sequence of answers hands out for the first time is higher than
 * every token `key` had before (tokens strictly increase per key, in the order of the requests).
 * `known` holds the tokens seen so far per key (prepared leases) and is updated.
 */
export function expectNewTokensIncrease(
  answers: readonly ClaimResult[],
  known: Map<string, Set<number>>,
  what: string,
): void {
  answers.forEach((answer, i) => {
    const lease = leaseOf(answer);
    if (!lease) return;
    const seen = known.get(lease.key) ?? new Set<number>();
    known.set(lease.key, seen);
    if (seen.has(lease.token)) return;
    const highest = Math.max(0, ...seen);
    expect(
      Number.isSafeInteger(lease.token) && lease.token > highest,
      `${what}: answer ${i} (${lease.key} @ ${lease.fireAt}) hands out token ${lease.token}, which must be an integer above every earlier token of the key (highest ${highest})`,
    ).toBe(true);
    seen.add(lease.token);
  });
}

/** How far two lease expiries of one request may differ (twin calls are a moment apart), ms. */
export function expiryTolerance(options: LockConformanceOptions, lock: Lock): number {
  const { leaseGranularityMs, backendTimeBoundMs } = lock.capabilities;
  return (2000 + leaseGranularityMs + (backendTimeBoundMs ?? 0)) * (options.timeScale ?? 1);
}

/**
 * Releases `leases` through `releaseMany` in chunks of at most `maxBatch` when the lock has it,
 * else one by one with `release`.
 */
export async function releaseInBatches(
  lock: Lock,
  leases: readonly Lease[],
  maxBatch: number,
): Promise<boolean[]> {
  const out: boolean[] = [];
  const releaseMany = lock.releaseMany;
  if (typeof releaseMany !== 'function') {
    for (const lease of leases) out.push(await lock.release(lease));
    return out;
  }
  for (const part of chunks(leases, maxBatch)) {
    const answers = await releaseMany.call(lock, part);
    expect(answers, 'releaseMany answers one boolean per lease').toHaveLength(part.length);
    out.push(...answers);
  }
  return out;
}

/** Splits `items` into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** `describeResult` for an answer that may be missing (a short batch answer). */
export function describeAnswer(result: ClaimResult | undefined): string {
  if (!result) return 'no answer';
  const at = fireOf(result);
  const lease = leaseOf(result);
  const what = lease ? `won (owner ${lease.owner}, token ${lease.token})` : result.status;
  return `${at.key} @ ${at.fireAt}: ${result.status === 'lost' ? `lost (${result.reason})` : what}`;
}
