import {
  type ClaimResult,
  type Lock,
  type LockCapabilities,
  offsetClock,
  realClock,
} from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockScenario, LockScenarioOptions } from '../types.js';
import { describeResult, leaseFor, using, waitUntilTime, wonLease } from '../util.js';
import { req } from './helpers.js';

/** The early tolerance the lock declares; the scenario fails when it declares none. */
function toleranceOf(options: LockScenarioOptions): number {
  const tolerance = options.capabilities.earlyToleranceMs;
  if (tolerance === undefined) {
    throw new Error(
      `${options.name}: capabilities.earlyToleranceMs is not declared. Declare how far ahead of the backend's clock a claim may be (default 250 ms) and refuse claims further ahead with lost/early.`,
    );
  }
  expect(tolerance, 'earlyToleranceMs is a small number of ms').toBeGreaterThanOrEqual(0);
  expect(tolerance).toBeLessThan(60_000);
  return tolerance;
}

/**
 * The backend's time of an answer, checked against the test's own clock (backend and test share
 * a host): present for `clock: 'backend'` locks, and taken between the request and its answer.
 */
function expectBackendTime(
  options: LockScenarioOptions,
  answer: { backendTime?: number } | null,
  sentAt: number,
  what: string,
): void {
  if (!judgedByBackendClock(options.capabilities)) return; // a client-clock lock may leave it out
  // an estimated backend time (etcd) is good to its declared bound
  const bound = options.capabilities.backendTimeBoundMs ?? 0;
  const time = answer?.backendTime;
  expect(time, `${what} carries the backend's time (backendTime)`).toBeTypeOf('number');
  // one host, one clock: the backend read its clock after the request left and before the answer
  expect(time!, `${what}: backendTime is not before the request was sent`).toBeGreaterThanOrEqual(
    sentAt - 1 - bound,
  );
  expect(time!, `${what}: backendTime is not after the answer came`).toBeLessThanOrEqual(
    Date.now() + 1 + bound,
  );
}

/**
 * The lock reports the backend's time and judges `early` by it: `clock: 'backend'`, or a
 * client-clock lock that estimates the backend's clock (`backendTimeBoundMs`, etcd).
 */
function judgedByBackendClock(capabilities: LockCapabilities): boolean {
  return capabilities.clock === 'backend' || capabilities.backendTimeBoundMs !== undefined;
}

async function timed<T>(call: () => Promise<T>): Promise<{ answer: T; sentAt: number }> {
  const sentAt = Date.now();
  return { answer: await call(), sentAt };
}

/**
 * Scenario: the backend's clock decides when a fire may start. A claim for a fire more than
 * `earlyToleranceMs` ahead of the backend's clock is refused `lost`/`early` with the backend's
 * time and records nothing; the same claim sent once the backend's clock is within the tolerance
 * wins. Every claim answer and renewal of a lock judged by the backend's clock (`clock:
 * 'backend'`, or an estimate within `backendTimeBoundMs`) carries the backend's time; a client
 * whose clock runs 30 s fast cannot claim early.
 */
export const earlyByBackendClock: LockScenario = {
  title:
    "a claim more than earlyToleranceMs ahead of the backend's clock is refused early with the backend's time; sent at the right time it wins",
  timeoutMs: 60_000,
  async run(options) {
    const tolerance = toleranceOf(options);
    const margin = 2000 * (options.timeScale ?? 1);
    await using(options.create, async (fixture) => {
      const lease = leaseFor(options.capabilities, 20_000);
      const [a, b] = [await fixture.newLock(), await fixture.newLock()];
      const key = 'fleet-clock';
      const fireAt = Date.now() + tolerance + margin;

      const early = await timed(() => a!.claim(req(key, fireAt, 'a', lease)));
      expect(early.answer, 'a fire further ahead than the tolerance').toMatchObject({
        status: 'lost',
        reason: 'early',
      });
      expectBackendTime(options, early.answer, early.sentAt, 'the early refusal');
      if (early.answer.backendTime !== undefined) {
        expect(early.answer.backendTime + tolerance).toBeLessThan(fireAt);
      }
      expect((await a!.inspect(key)).fires, 'an early refusal records nothing').toEqual([]);

      // inside the tolerance by the backend's clock (= this host's clock): the claim wins
      await waitUntilTime(fireAt - Math.floor(tolerance / 2), 'the backend clock to near the fire');
      const onTime = await timed(() => a!.claim(req(key, fireAt, 'a', lease)));
      const held = wonLease(onTime.answer, 'the same claim sent within the tolerance');
      expectBackendTime(options, onTime.answer, onTime.sentAt, 'a won claim');

      const other = await timed(() => b!.claim(req(key, fireAt, 'b', lease)));
      expect(other.answer, 'another owner').toMatchObject({ status: 'lost', reason: 'claimed' });
      expectBackendTime(options, other.answer, other.sentAt, 'a claim lost to another owner');

      const busy = await timed(() => b!.claim(req(key, fireAt - 1000, 'b', lease)));
      expect(
        busy.answer.status,
        `a new fire during the exclusive lease: ${describeResult(busy.answer)}`,
      ).toBe('busy');
      expectBackendTime(options, busy.answer, busy.sentAt, 'a busy answer');

      const renewed = await timed(() => a!.extend(held, lease));
      expect(renewed.answer, 'the holder renews its lease').not.toBeNull();
      expectBackendTime(options, renewed.answer, renewed.sentAt, 'a renewal');

      if (judgedByBackendClock(options.capabilities))
        await fastClientCannotClaimEarly(fixture, lease);
    });
  },
};

/** A client whose own clock runs 30 s fast is judged by the backend's clock. */
async function fastClientCannotClaimEarly(
  fixture: { newLock(o?: { clock?: typeof realClock }): Promise<Lock> },
  lease: number,
): Promise<void> {
  const fast = await fixture.newLock({ clock: offsetClock(realClock, 30_000) });
  const ahead = Date.now() + 30_000;
  const result: ClaimResult = await fast.claim(req('fast-client', ahead, 'fast', lease));
  expect(result, 'a claim at a fast client clock is judged by the backend clock').toMatchObject({
    status: 'lost',
    reason: 'early',
  });
}
