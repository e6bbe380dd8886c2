import { expect } from 'vitest';
import type { LockScenario } from '../types.js';
import { delay, fireNear, leaseFor, randomInt, using } from '../util.js';
import { clients, req } from './helpers.js';

/** Clients racing in the fuzz scenario. */
const CLIENTS = 8;
/** Fires the fuzz scenario plays through. */
const FIRES = 300;

/**
 * Scenario 18: mutual-exclusion fuzz with exact totals (after ShedLock's FuzzTester).
 *
 * Eight clients play through 300 fires of one job. Each client claims the current fire
 * (exclusive); the winner reads a shared counter, waits a random few ms, writes counter + 1 and
 * releases; everyone moves on to the next fire. Any overlap of two holders loses an update, so
 * the counter must equal the number of wins exactly, and at most one holder may ever be inside.
 */
export const mutualExclusionFuzz: LockScenario = {
  title: 'fuzz: 8 clients, exclusive claims, shared counter equals wins, never two holders',
  timeoutMs: 120_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const locks = await clients(fixture, CLIENTS);
      const key = 'fuzz';
      const lease = leaseFor(options.capabilities, 30_000);
      const base = fireNear(-150_000);
      let current = 0; // index of the fire the fleet is on
      let counter = 0;
      let inside = 0;
      let maxInside = 0;
      let claims = 0;
      let wins = 0;
      const answers = new Map<number, { won: number; busy: number; lost: number }>();

      let failed = false;
      const client = async (c: number) => {
        while (current < FIRES && !failed) {
          const fire = current;
          const result = await locks[c]!.claim(req(key, base + fire * 500, `client-${c}`, lease));
          claims++;
          const tally = answers.get(fire) ?? { won: 0, busy: 0, lost: 0 };
          answers.set(fire, tally);
          if (result.status === 'won') {
            tally.won++;
            wins++;
            inside++;
            maxInside = Math.max(maxInside, inside);
            const read = counter;
            await delay(randomInt(4));
            counter = read + 1;
            inside--;
            expect(await locks[c]!.release(result.lease), 'the holder releases').toBe(true);
          } else if (result.status === 'busy') {
            tally.busy++;
          } else {
            tally.lost++;
            expect(result.reason).toBe('claimed');
          }
          current = Math.max(current, fire + 1);
          if (result.status !== 'won') await delay(randomInt(3)); // fleet jitter between fires
        }
      };
      // The first failing client stops the others, so nothing claims after the fixture closed.
      const settled = await Promise.allSettled(
        locks.map((_, c) =>
          client(c).catch((error: unknown) => {
            failed = true;
            throw error;
          }),
        ),
      );
      for (const result of settled) if (result.status === 'rejected') throw result.reason;

      expect(maxInside, 'never two holders at once').toBe(1);
      expect(counter, 'no lost update: the counter equals the number of wins').toBe(wins);
      let answered = 0;
      for (const [fire, tally] of answers) {
        expect(tally.won + tally.busy, `fire ${fire}: exactly one claimer won or was busy`).toBe(1);
        answered += tally.won + tally.busy + tally.lost;
      }
      expect(answered).toBe(claims);
      expect(wins, 'the fleet made progress').toBeGreaterThanOrEqual(10);
    });
  },
};
