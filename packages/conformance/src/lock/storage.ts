import type { Lock } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockFixture, LockScenario } from '../types.js';
import { delay, leaseFor, pollUntil, using } from '../util.js';
import { req } from './helpers.js';

/** Fires claimed by the bounded-storage scenario. */
export const STORAGE_FIRES = 10_000;
/** Keys (one client each) the bounded-storage scenario claims on in parallel. */
const WORKERS = 4;
/** Claim window of the bounded-storage scenario's clients. */
const WINDOW_MS = 2000;

/** Counts claim records: through the probe when the fixture has one, else through `inspect`. */
async function countRecords(fixture: LockFixture, lock: Lock, keys: string[]): Promise<number> {
  if (fixture.probe) return fixture.probe.claimRecordCount();
  let total = 0;
  for (const key of keys) total += (await lock.inspect(key)).fires.length;
  return total;
}

/**
 * Scenario 6: claim records are collected after `fireAt + windowMs`.
 *
 * Four clients claim 10,000 fires on four keys, each fire placed `margin` ms inside the stale
 * edge (`now - windowMs + margin`), so every record may be collected `margin` ms after its claim.
 * While they run, and once more after the last window has passed, the suite counts the records
 * the backend holds and requires every record older than `fireAt + windowMs + collectionLagMs`
 * to be gone: the count must stay at or below the number of fires claimed since then.
 */
export const boundedStorage: LockScenario = {
  title: 'claim records are collected after the window: storage stays bounded over 10,000 fires',
  timeoutMs: 180_000,
  async run(options) {
    const scale = options.timeScale ?? 1;
    // how long a claim may take before its fire goes stale (the window is 2 s): 1 s, since a
    // SQLite claim waited over 500 ms for the write lock beside a loaded CI run (c55edc5)
    const margin = 1000 * scale;
    const lag = options.collectionLagMs ?? 1000;
    const leaseMs = leaseFor(options.capabilities, 1);
    await using(options.create, async (fixture) => {
      const keys = Array.from({ length: WORKERS }, (_, i) => `bounded-${i}`);
      const locks: Lock[] = [];
      for (const _ of keys) locks.push(await fixture.newLock({ windowMs: WINDOW_MS }));
      const issued: number[] = [];
      const lastFire = new Map<string, number>();
      let done = false;
      const checks: { count: number; bound: number }[] = [];

      /** Counts records and the most the contract allows at that moment. */
      const check = async () => {
        const t0 = Date.now();
        const count = await countRecords(fixture, locks[0]!, keys);
        const bound = issued.filter((f) => f + WINDOW_MS + lag >= t0).length;
        checks.push({ count, bound });
        expect(
          count,
          `records held ${count}; at most ${bound} fires claimed since ${t0 - WINDOW_MS - lag} may still be kept`,
        ).toBeLessThanOrEqual(bound);
      };

      const worker = async (i: number) => {
        const key = keys[i]!;
        const lock = locks[i]!;
        const perWorker = STORAGE_FIRES / WORKERS;
        let prev = 0;
        for (let n = 0; n < perWorker && !done; ) {
          // Fire times are integers, so a key has at most one fire per ms: a fast backend runs
          // ahead of the clock by up to `margin / 2`, then waits for real time to catch up.
          const edge = Date.now() - WINDOW_MS + margin;
          const fireAt = Math.max(prev + 1, edge);
          if (fireAt > edge + margin / 2) {
            await delay(margin / 4);
            continue;
          }
          prev = fireAt;
          issued.push(fireAt);
          lastFire.set(key, fireAt);
          const result = await lock.claim(req(key, fireAt, `w${i}`, leaseMs));
          if (result.status === 'lost') {
            throw new Error(
              `fire ${margin} ms inside the window came back lost (${result.reason}): the backend's clock differs from the test's by more than ${margin} ms, or claims take longer; raise timeScale`,
            );
          }
          n++;
        }
      };

      const monitor = async () => {
        while (!done) {
          await check();
          await delay(250 * scale);
        }
      };
      // Whichever side fails first stops the other, so nothing claims after the fixture closed.
      const stopping = <T>(promise: Promise<T>) =>
        promise.finally(() => {
          done = true;
        });
      const settled = await Promise.allSettled([
        stopping(Promise.all(keys.map((_, i) => worker(i)))),
        stopping(monitor()),
      ]);
      for (const result of settled) if (result.status === 'rejected') throw result.reason;
      await check();
      expect(issued).toHaveLength(STORAGE_FIRES);

      // After every claimed fire's window (plus the lag) has passed, one more claim per key
      // (backends may collect lazily, on the next claim of the key): only those may remain.
      const newest = Math.max(...lastFire.values());
      await waitUntilPast(newest + WINDOW_MS + lag);
      for (const [i, key] of keys.entries()) {
        const fireAt = Date.now() - WINDOW_MS + margin;
        issued.push(fireAt);
        await locks[i]!.claim(req(key, fireAt, `w${i}`, leaseMs));
      }
      const remaining = await pollUntil(
        async () => {
          const count = await countRecords(fixture, locks[0]!, keys);
          return count <= WORKERS ? count : undefined;
        },
        {
          timeoutMs: lag + 5000 * scale,
          intervalMs: 100,
          message: `the claim records of ${STORAGE_FIRES} fires past their window to be collected (at most ${WORKERS} records may remain)`,
        },
      );
      expect(remaining).toBeLessThanOrEqual(WORKERS);
      expect(checks.length, 'storage was checked during the run').toBeGreaterThan(1);
    });
  },
};

function waitUntilPast(epochMs: number): Promise<true> {
  return pollUntil(() => Date.now() > epochMs, {
    timeoutMs: Math.max(0, epochMs - Date.now()) + 10_000,
    intervalMs: 20,
    message: 'the claim window of the last fire to pass',
  });
}
