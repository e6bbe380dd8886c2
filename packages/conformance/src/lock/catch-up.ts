import type { ClaimRequest, ClaimResult, Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario, LockScenarioOptions } from '../types.js';
import { describeResult, fireNear, leaseFor, using, wonLease } from '../util.js';
import { clients, req } from './helpers.js';

/** The claim window of the clients in these scenarios: short, so catch-up fires lie outside it. */
export const CATCH_UP_WINDOW_MS = 60_000;

/** A catch-up claim request: `req(...)` plus `catchUp: { since }`. */
export function catchUpReq(
  key: string,
  fireAt: number,
  owner: string,
  leaseMs: number,
  since: number,
  exclusive = false,
): ClaimRequest {
  return { ...req(key, fireAt, owner, leaseMs, exclusive), catchUp: { since } };
}

/** The key's catch-up mark as `inspect` reports it. */
export async function markOf(lock: Lock, key: string): Promise<number | null> {
  return (await lock.inspect(key)).mark;
}

/** Asserts a `lost` answer with one of `reasons`. */
export function expectLost(result: ClaimResult, reasons: string[], what: string): void {
  expect(
    result.status === 'lost' && reasons.includes(result.reason),
    `${what}: expected lost (${reasons.join(' or ')}), got ${describeResult(result)}`,
  ).toBe(true);
}

/** `true` when the adapter declares a catch-up mark; otherwise asserts it has none. */
export async function hasMark(options: LockScenarioOptions, lock: Lock): Promise<boolean> {
  expect(lock.capabilities.durableMark, 'capabilities.durableMark as declared').toBe(
    options.capabilities.durableMark,
  );
  if (options.capabilities.durableMark !== undefined) return true;
  expect(await markOf(lock, 'no-mark'), 'a lock without a mark reports mark: null').toBeNull();
  return false;
}

/**
 * Scenario: ordinary claims move the key's mark to the NEWEST recorded fire (won or busy, in any
 * order), per key; `inspect` reports it; a withdrawn claim does not move it back.
 */
const marksNewestFire: LockScenario['run'] = async (options) => {
  await using(options.create, async (fixture) => {
    const [a, b] = (await clients(fixture, 2)) as [Lock, Lock];
    if (!(await hasMark(options, a))) return;
    const leaseMs = leaseFor(options.capabilities, 30_000);
    const t = fireNear(-30_000);
    const key = 'mark-newest';
    expect(await markOf(a, key), 'a key never claimed has no mark').toBeNull();

    wonLease(await a.claim(req(key, t - 20_000, 'a', leaseMs, true)), 'first exclusive claim');
    expect(await markOf(b, key), 'the mark after one claim').toBe(t - 20_000);
    const busy = await b.claim(req(key, t - 10_000, 'b', leaseMs, true));
    expect(busy.status, 'a second exclusive fire while the lease lives').toBe('busy');
    expect(await markOf(a, key), 'a busy record moves the mark too').toBe(t - 10_000);
    await b.claim(req(key, t - 15_000, 'b', leaseMs, true));
    expect(await markOf(a, key), 'an older fire claimed later leaves the newest').toBe(t - 10_000);
    const newest = wonLease(await b.claim(req(key, t, 'b', leaseMs, false)), 'newest fire');
    expect(await markOf(a, key), 'the newest fire is the mark').toBe(t);
    await a.claim(req(key, t - 5000, 'a', leaseMs, false));
    expect(await markOf(b, key), 'newest, not last').toBe(t);
    expect(await markOf(a, 'mark-other'), 'marks are per key').toBeNull();

    if (b.withdraw && (await b.withdraw(newest))) {
      expect(await markOf(a, key), 'a withdrawn claim does not move the mark back').toBe(t);
      const again = await a.claim({ ...catchUpReq(key, t, 'a', leaseMs, t - 60_000) });
      expectLost(again, ['behind_mark'], 'a catch-up claim of the withdrawn newest fire');
    }
  });
};

/**
 * Scenario: catch-up claims are judged by the mark, not the window. A fire older than the window
 * but not older than `since` and newer than the mark is won once and moves the mark; fires at or
 * behind the mark lose (`behind_mark`, or `claimed` when the fire's record is still kept); fires
 * older than `since` are `stale`; concurrent catch-up claims of one missed fire win once.
 */
const catchUpJudgedByMark: LockScenario['run'] = async (options) => {
  await using(options.create, async (fixture) => {
    const locks: Lock[] = [];
    for (let i = 0; i < 5; i++) locks.push(await fixture.newLock({ windowMs: CATCH_UP_WINDOW_MS }));
    const [a, b] = locks as [Lock, Lock];
    if (!(await hasMark(options, a))) return;
    const leaseMs = leaseFor(options.capabilities, 30_000);
    const now = fireNear();
    const since = now - 30 * 60_000;
    const key = 'catch-up';
    const old = now - 20 * 60_000;

    expectLost(await a.claim(req(key, old, 'a', leaseMs, false)), ['stale'], 'an ordinary claim');
    const first = wonLease(
      await a.claim(catchUpReq(key, old, 'a', leaseMs, since)),
      'catch-up of a fire past the window',
    );
    const resent = await a.claim(catchUpReq(key, old, 'a', leaseMs, since));
    expect(resent, 'a re-sent catch-up claim gets the same lease').toMatchObject({
      status: 'won',
      lease: { token: first.token, fireAt: old, owner: 'a' },
    });
    expect(await markOf(b, key), 'the catch-up claim moved the mark').toBe(old);
    expectLost(
      await b.claim(catchUpReq(key, old, 'b', leaseMs, since)),
      ['behind_mark', 'claimed'],
      'a second catch-up claim of the same fire',
    );
    expectLost(
      await b.claim(catchUpReq(key, old - 60_000, 'b', leaseMs, since)),
      ['behind_mark'],
      'a catch-up claim of an unclaimed fire older than the mark',
    );
    expectLost(
      await b.claim(catchUpReq(key, old + 60_000, 'b', leaseMs, old + 120_000)),
      ['stale'],
      'a catch-up claim older than its since',
    );

    // Concurrent catch-up claims of each missed fire, from five clients: one winner per fire.
    for (const missed of [old + 5 * 60_000, old + 10 * 60_000]) {
      const results = await Promise.all(
        locks.map((lock, i) => lock.claim(catchUpReq(key, missed, `c${i}`, leaseMs, since))),
      );
      const winners = results.filter((r) => r.status === 'won');
      expect(
        winners,
        `one winner of ${missed}: ${results.map(describeResult).join(', ')}`,
      ).toHaveLength(1);
      for (const r of results) {
        if (r.status !== 'won') expectLost(r, ['behind_mark', 'claimed'], 'a racing loser');
      }
      expect(await markOf(a, key), 'the race moved the mark').toBe(missed);
    }

    // An ordinary claim of a fire in the window moves the mark; catch-up cannot replay it.
    const recent = now - 10_000;
    wonLease(
      await a.claim(req(key, recent, 'a', leaseMs, false)),
      'an ordinary claim in the window',
    );
    expect(await markOf(b, key), 'the ordinary claim moved the mark').toBe(recent);
    wonLease(
      await b.claim(req(key, recent - 2000, 'b', leaseMs, false)),
      'an older fire, claimed later',
    );
    expect(await markOf(a, key), 'the mark stays on the newest fire').toBe(recent);
    expectLost(
      await b.claim(catchUpReq(key, recent, 'b', leaseMs, since)),
      ['behind_mark', 'claimed'],
      'a catch-up claim of a fire an ordinary claim took',
    );
    expectLost(
      await b.claim(catchUpReq(key, recent - 1000, 'b', leaseMs, since)),
      ['behind_mark'],
      'a catch-up claim of an unclaimed fire just behind the mark',
    );
    wonLease(
      await b.claim(catchUpReq(key, recent + 1000, 'b', leaseMs, since)),
      'a catch-up claim of the fire after the mark',
    );
    expect(await markOf(a, key), 'mark after the last catch-up').toBe(recent + 1000);
  });
};

/** The catch-up mark scenarios (no server faults). */
export const catchUpScenarios = {
  catchUpMarksNewestFire: {
    title: 'catch-up mark: every recorded fire moves it to the newest (not the last); per key',
    timeoutMs: 45_000,
    run: marksNewestFire,
  },
  catchUpJudgedByMark: {
    title:
      'catch-up claims: won once and only ahead of the mark, past the window down to since; races win once',
    timeoutMs: 60_000,
    run: catchUpJudgedByMark,
  },
} as const satisfies Record<string, LockScenario>;
