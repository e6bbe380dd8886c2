import { isFleetcronError, type Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockFaultScenario } from '../types.js';
import { describeResult, fireNear, leaseFor, pollUntil, spyOnCrashes, using } from '../util.js';
import { CATCH_UP_WINDOW_MS, catchUpReq, expectLost, hasMark, markOf } from './catch-up.js';
import { req } from './helpers.js';

/** Reads the key's mark, retrying typed errors while the server comes back. */
async function markAfterRestart(lock: Lock, key: string, timeoutMs: number) {
  return pollUntil(
    async () => {
      try {
        return { mark: await markOf(lock, key) };
      } catch (error) {
        expect(
          isFleetcronError(error, 'BACKEND_UNAVAILABLE'),
          `inspect while the server recovers must throw BackendUnavailableError, got ${String(error)}`,
        ).toBe(true);
        return undefined;
      }
    },
    { timeoutMs, intervalMs: 200, message: 'inspect to answer after the restart' },
  );
}

/**
 * Scenario: the catch-up mark survives a server restart where `capabilities.durableMark` is
 * `true` (a catch-up claim behind it still loses afterwards). Where it is `false`, catch-up
 * claims after the restart still win at most once per fire.
 */
export const catchUpMarkSurvivesRestart: LockFaultScenario = {
  title: 'catch-up mark survives a backend restart where durableMark is declared',
  timeoutMs: 90_000,
  async run(options, faults) {
    const spy = spyOnCrashes();
    try {
      await using(faults.create, async (fixture) => {
        const a = await fixture.newLock({ windowMs: CATCH_UP_WINDOW_MS });
        const b = await fixture.newLock({ windowMs: CATCH_UP_WINDOW_MS });
        if (!(await hasMark(options, a))) return;
        const leaseMs = leaseFor(options.capabilities, 20_000);
        const key = 'mark-restart';
        const t = fireNear(-10_000);
        const since = t - 30 * 60_000;
        const won = await a.claim(req(key, t, 'a', leaseMs, false));
        expect(won.status, `claim before the restart: ${describeResult(won)}`).toBe('won');

        await faults.server.restart();

        const { mark } = await markAfterRestart(b, key, 30_000 * (options.timeScale ?? 1));
        if (options.capabilities.durableMark) {
          expect(mark, 'durable: the mark survives the restart').toBe(t);
          expectLost(
            await b.claim(catchUpReq(key, t - 5 * 60_000, 'b', leaseMs, since)),
            ['behind_mark'],
            'durable: a catch-up claim behind the pre-restart mark',
          );
        }
        const missed = t - 2 * 60_000;
        const c = await fixture.newLock({ windowMs: CATCH_UP_WINDOW_MS });
        const results = await Promise.all([
          c.claim(catchUpReq(key, missed, 'c', leaseMs, since)),
          b.claim(catchUpReq(key, missed, 'b', leaseMs, since)),
        ]);
        const winners = results.filter((r) => r.status === 'won');
        expect(
          winners.length,
          `catch-up after the restart wins at most once: ${results.map(describeResult).join(', ')}`,
        ).toBeLessThanOrEqual(options.capabilities.durableMark ? 0 : 1);
      });
      expect(spy.caught, 'no unhandled rejection or uncaught exception').toEqual([]);
    } finally {
      spy.dispose();
    }
  },
};
