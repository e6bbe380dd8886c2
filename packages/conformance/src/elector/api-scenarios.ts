import { randomUUID } from 'node:crypto';
import {
  type CampaignResult,
  type Elector,
  isFleetcronError,
  type LeaderInfo,
} from '@fleetcron/core';
import { expect } from 'vitest';
import { pollUntil, using } from '../util.js';
import { readingElectorCapabilities } from './capabilities.js';
import { ttlFor } from './setup.js';
import type { ElectorScenario, ElectorScenarioOptions } from './types.js';

const name = () => `election-${randomUUID().slice(0, 8)}`;

/** Asserts an elected answer and returns its leader. */
function elected(result: CampaignResult, what: string): LeaderInfo {
  if (result.status !== 'elected') {
    throw new Error(
      `${what}: expected elected, got follower of ${result.leader.id} (term ${result.leader.term})`,
    );
  }
  return result.leader;
}

async function electors(
  options: ElectorScenarioOptions,
  n: number,
  body: (e: Elector[]) => Promise<void>,
) {
  await using(options.create, async (fixture) => {
    const list: Elector[] = [];
    for (let i = 0; i < n; i++) list.push(await fixture.newElector());
    await body(list);
  });
}

/** 1. Every elector declares the same capabilities (the ones read); fixtures are isolated. */
export const capabilitiesAndIsolation: ElectorScenario = {
  title: 'every elector declares the same capabilities; fixtures are isolated namespaces',
  timeoutMs: 30_000,
  run: async (options) => {
    await using(options.create, async (one) =>
      using(options.create, async (two) => {
        const a = await one.newElector();
        const b = await two.newElector();
        for (const elector of [a, b]) {
          expect(elector.capabilities, 'every elector declares the capabilities read').toEqual(
            options.capabilities,
          );
        }
        const election = name();
        const ttlMs = ttlFor(options.capabilities, 5000);
        elected(await a.campaign({ election, id: 'a', ttlMs }), 'a in fixture one');
        expect(await b.leader(election), 'fixture two sees no leader of fixture one').toBeNull();
        elected(await b.campaign({ election, id: 'b', ttlMs }), 'b in fixture two');
      }),
    );
  },
};

/** 2. One leader; followers are told who leads; terms strictly increase, never reused. */
export const termsIncrease: ElectorScenario = {
  title:
    'one leader per election; followers learn the leader; terms strictly increase (resign, re-election, another candidate)',
  timeoutMs: 30_000,
  run: (options) =>
    electors(options, 3, async ([a, b, c]) => {
      const election = name();
      const ttlMs = ttlFor(options.capabilities, 10_000);
      const first = elected(await a!.campaign({ election, id: 'a', ttlMs }), 'first campaign');
      expect(first).toMatchObject({ election, id: 'a' });
      expect(first.expiresAt, 'expiresAt is an epoch ms about ttlMs ahead').toBeGreaterThan(
        Date.now() + ttlMs / 2 - 60_000,
      );
      const follower = await b!.campaign({ election, id: 'b', ttlMs });
      expect(follower.status, 'a second candidate is a follower while a leads').toBe('follower');
      if (follower.status === 'follower') {
        expect(follower.leader).toMatchObject({ id: 'a', term: first.term });
        expect(typeof follower.now).toBe('number');
      }
      expect(await c!.leader(election)).toMatchObject({ id: 'a', term: first.term });
      const again = elected(
        await a!.campaign({ election, id: 'a', ttlMs }),
        'the leader campaigning again',
      );
      expect(again.term, 'the leader campaigning again gets a new, higher term').toBeGreaterThan(
        first.term,
      );
      const terms = [first.term, again.term];
      let holder = again;
      const clients = [a!, b!, c!];
      for (let i = 0; i < 9; i++) {
        expect(
          await clients[['a', 'b', 'c'].indexOf(holder.id)]!.resign(holder),
          'resign of the live term',
        ).toBe(true);
        const id = ['a', 'b', 'c'][i % 3]!;
        holder = elected(
          await clients[i % 3]!.campaign({ election, id, ttlMs }),
          `${id} after a resignation`,
        );
        terms.push(holder.term);
      }
      for (let i = 1; i < terms.length; i++) {
        expect(terms[i], `terms strictly increase: ${terms.join(', ')}`).toBeGreaterThan(
          terms[i - 1]!,
        );
      }
    }),
};

/** 3. A stale term is never renewed or resigned, and never touches the new one. */
export const staleTerm: ElectorScenario = {
  title:
    'renew and resign act on the given term only: a stale term gets null/false and leaves the new leader alone',
  timeoutMs: 30_000,
  run: (options) =>
    electors(options, 2, async ([a, b]) => {
      const election = name();
      const ttlMs = ttlFor(options.capabilities, 1000);
      const old = elected(await a!.campaign({ election, id: 'a', ttlMs }), 'a');
      await pollUntil(async () => (await b!.leader(election)) === null, {
        timeoutMs: (ttlMs + 10_000) * (options.timeScale ?? 1),
        message: `a's term to expire by the backend's clock`,
      });
      const now = elected(
        await b!.campaign({ election, id: 'b', ttlMs: ttlFor(options.capabilities, 20_000) }),
        'b after expiry',
      );
      expect(now.term).toBeGreaterThan(old.term);
      expect(await a!.renew(old, ttlMs), 'renewing an expired, replaced term').toBeNull();
      expect(await a!.resign(old), 'resigning an expired, replaced term').toBe(false);
      expect(
        await a!.renew({ ...old, id: 'b' }, ttlMs),
        "a stale term under the new leader's id",
      ).toBeNull();
      expect(await b!.leader(election), 'the new term is untouched').toMatchObject({
        id: 'b',
        term: now.term,
      });
      const renewed = await b!.renew(now, ttlFor(options.capabilities, 20_000));
      expect(renewed, 'the live term renews').toMatchObject({ id: 'b', term: now.term });
      expect(await b!.resign(now), 'resigning the live term').toBe(true);
      expect(await b!.resign(now), 'resigning it twice').toBe(false);
      expect(await a!.leader(election), 'no leader after the resignation').toBeNull();
    }),
};

/** 4. Bad input: typed errors naming the field. */
export const badInput: ElectorScenario = {
  title: 'bad campaign input throws typed errors naming the field',
  timeoutMs: 30_000,
  run: (options) =>
    electors(options, 1, async ([a]) => {
      const ttlMs = ttlFor(options.capabilities, 5000);
      const cases: [Record<string, unknown>, string][] = [
        [{ election: '', id: 'a', ttlMs }, 'election'],
        [{ election: name(), id: '', ttlMs }, 'id'],
        [{ election: name(), id: 'a', ttlMs: -5 }, 'ttlMs'],
      ];
      if (options.capabilities.minTtlMs > 1) {
        cases.push([
          { election: name(), id: 'a', ttlMs: options.capabilities.minTtlMs - 1 },
          'ttlMs',
        ]);
      }
      for (const [request, field] of cases) {
        const error = await a!.campaign(request as never).then(
          () => null,
          (e: unknown) => e,
        );
        expect(
          isFleetcronError(error),
          `${JSON.stringify(request)} throws a FleetcronError, got ${String(error)}`,
        ).toBe(true);
        expect((error as { field?: string }).field).toBe(field);
      }
    }),
};

/** The API scenarios, in registration order. */
export const electorApiScenarios = readingElectorCapabilities({
  capabilitiesAndIsolation,
  termsIncrease,
  staleTerm,
  badInput,
} as const satisfies Record<string, ElectorScenario>);
