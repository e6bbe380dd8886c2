import { type ClaimResult, isFleetcronError, type Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type {
  LockConformanceOptions,
  LockFaultScenario,
  LockFaults,
  LockScenarioOptions,
} from '../types.js';
import { describeResult, fireNear, leaseFor, pollUntil, spyOnCrashes, using } from '../util.js';
import { readingLockCapabilitiesForFaults } from './capabilities.js';
import { catchUpMarkSurvivesRestart } from './catch-up-restart.js';
import { req } from './helpers.js';
import { restartDuringClaimBurst } from './restart-burst.js';

/** Outcome of a claim that may meet a broken server. */
type Outcome = { ok: ClaimResult } | { error: unknown };

async function attempt(lock: Lock, ...args: Parameters<typeof req>): Promise<Outcome> {
  try {
    return { ok: await lock.claim(req(...args)) };
  } catch (error) {
    return { error };
  }
}

/** Asserts a failed operation failed with the typed error, never anything else. */
function expectTyped(error: unknown, what: string): void {
  expect(
    isFleetcronError(error, 'BACKEND_UNAVAILABLE'),
    `${what} must throw BackendUnavailableError (code BACKEND_UNAVAILABLE), got ${String(error)}`,
  ).toBe(true);
}

/**
 * Claims fresh fires until the backend answers (won or busy, never an unexpected `lost`). Fires
 * whose claim threw are skipped: whether they were recorded is unknown.
 */
async function claimUntilAnswered(
  lock: Lock,
  options: LockScenarioOptions,
  key: string,
  firstFireAt: number,
  owner: string,
  leaseMs: number,
  exclusive: boolean,
): Promise<ClaimResult> {
  let fireAt = firstFireAt;
  return pollUntil(
    async () => {
      const outcome = await attempt(lock, key, fireAt++, owner, leaseMs, exclusive);
      if ('error' in outcome) {
        expectTyped(outcome.error, 'a claim while the server recovers');
        return undefined;
      }
      return outcome.ok;
    },
    {
      timeoutMs: 30_000 * (options.timeScale ?? 1),
      intervalMs: 200,
      message: `claims on ${key} to be answered again after the fault`,
    },
  );
}

/** Scenario 16: connections dropped by the server mid-claim. */
export const droppedConnection: LockFaultScenario = {
  title:
    'a connection dropped by the server mid-claim gives a typed error or a valid answer, never a crash',
  timeoutMs: 60_000,
  async run(options, faults) {
    const spy = spyOnCrashes();
    try {
      await using(faults.create, async (fixture) => {
        const [a, b] = [await fixture.newLock(), await fixture.newLock()];
        const key = 'dropped';
        const lease = leaseFor(options.capabilities, 20_000);
        const t = fireNear(-60_000);
        const warm = await a.claim(req(key, t, 'a', lease, false));
        expect(warm.status, 'a claim before the fault').toBe('won');

        const inFlight = Array.from({ length: 20 }, (_, i) =>
          attempt(i % 2 ? a : b, key, t + 1 + i, i % 2 ? 'a' : 'b', lease, false),
        );
        await faults.server.dropConnections();
        const outcomes = await Promise.all(inFlight);
        for (const outcome of outcomes) {
          if ('error' in outcome) expectTyped(outcome.error, 'a claim cut by a dropped connection');
          else expect(outcome.ok.status, 'an answered claim of a fresh fire').toBe('won');
        }

        // Both clients recover by themselves.
        for (const [lock, owner] of [
          [a, 'a'],
          [b, 'b'],
        ] as const) {
          const answer = await claimUntilAnswered(
            lock,
            options,
            key,
            t + 1000 * (owner === 'a' ? 1 : 2),
            owner,
            lease,
            false,
          );
          expect(answer.status, `client ${owner} after the drop: ${describeResult(answer)}`).toBe(
            'won',
          );
        }
        // Whatever was won during the fault is still won exactly once.
        for (const [i, outcome] of outcomes.entries()) {
          if ('ok' in outcome && outcome.ok.status === 'won') {
            const other = i % 2 ? b : a;
            expect(await other.claim(req(key, t + 1 + i, 'third', lease, false))).toMatchObject({
              status: 'lost',
              reason: 'claimed',
            });
          }
        }
      });
      expect(
        spy.caught,
        'no unhandled rejection or uncaught exception (unhandled error events)',
      ).toEqual([]);
    } finally {
      spy.dispose();
    }
  },
};

/** Scenario 17: a server restart during a live lease. */
export const serverRestart: LockFaultScenario = {
  title: 'backend restart during a lease: durable backends keep fires and leases, all recover',
  timeoutMs: 90_000,
  async run(options, faults) {
    const spy = spyOnCrashes();
    try {
      await using(faults.create, async (fixture) => {
        const holder = await fixture.newLock();
        const other = await fixture.newLock();
        const key = 'restart';
        const lease = leaseFor(options.capabilities, 60_000);
        const t = fireNear(-60_000);
        const held = (await holder.claim(req(key, t, 'holder', lease))) as ClaimResult;
        if (held.status !== 'won') throw new Error(`holder: ${describeResult(held)}`);

        await faults.server.restart();

        // Clients made before the restart recover by themselves.
        const next = await claimUntilAnswered(other, options, key, t + 1000, 'other', lease, true);
        if (options.capabilities.durable) {
          expect(next.status, 'durable: the live lease survives a restart (no second holder)').toBe(
            'busy',
          );
          expect(
            await other.claim(req(key, t, 'other', lease)),
            'durable: a fire claimed before the restart cannot be won again',
          ).toMatchObject({ status: 'lost', reason: 'claimed' });
          const renewed = await pollUntil(
            async () => {
              try {
                return (await holder.extend(held.lease, lease)) ?? false;
              } catch (error) {
                expectTyped(error, 'extend while the server recovers');
                return undefined;
              }
            },
            { timeoutMs: 30_000 * (options.timeScale ?? 1), intervalMs: 200, message: 'extend' },
          );
          expect(renewed.token).toBe(held.lease.token);
          expect(await holder.release(renewed)).toBe(true);
          const after = await other.claim(req(key, t + 5000, 'other', lease));
          expect(after.status).toBe('won');
          if (after.status === 'won') {
            expect(after.lease.token, 'durable: tokens keep increasing').toBeGreaterThan(
              held.lease.token,
            );
          }
        } else {
          // Not durable: nothing is promised about pre-restart state, only recovery and
          // one winner per fire afterwards.
          expect(['won', 'busy']).toContain(next.status);
          const fresh = t + 10_000;
          const results = await Promise.all([
            holder.claim(req(`${key}-after`, fresh, 'holder', lease)),
            other.claim(req(`${key}-after`, fresh, 'other', lease)),
          ]);
          expect(
            results.filter((r) => r.status === 'won'),
            `one winner after the restart: ${results.map(describeResult).join(', ')}`,
          ).toHaveLength(1);
        }
      });
      expect(spy.caught, 'no unhandled rejection or uncaught exception').toEqual([]);
    } finally {
      spy.dispose();
    }
  },
};

/** Fault scenarios, in order. */
export const lockFaultScenarios = readingLockCapabilitiesForFaults({
  droppedConnection,
  serverRestart,
  restartDuringClaimBurst,
  catchUpMarkSurvivesRestart,
} as const satisfies Record<string, LockFaultScenario>);

/**
 * What the fault scenarios assert when the adapter passes no `faults`: the adapter must declare
 * itself in-process (no server to break) and not durable. Anything else fails with a message
 * saying what to pass. Fault scenarios are never skipped silently.
 */
export function assertNoServer(options: LockScenarioOptions, scenario: string): void {
  if (options.inProcess !== true) {
    throw new Error(
      `${options.name} lock conformance: "${scenario}" needs a dedicated server. Pass \`faults: async () => ({ create, server, close })\` (see @fleetcron/conformance README, "Fault scenarios"), or \`inProcess: true\` if the backend has no server at all.`,
    );
  }
  expect(
    options.capabilities.durable,
    'an in-process backend loses everything with its process: it must declare durable: false',
  ).toBe(false);
}

/** Resolves the `faults` option to the dedicated server's fixture factory and controls. */
export async function resolveFaults(options: LockConformanceOptions): Promise<LockFaults | null> {
  const { faults } = options;
  if (!faults) return null;
  return typeof faults === 'function' ? faults() : faults;
}
