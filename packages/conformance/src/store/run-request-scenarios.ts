import type {
  FleetStore,
  RunRequest,
  RunRequestState,
  Store,
  TakenRunRequest,
} from '@fleetcron/core';
import { decidesRunRequests, hasFleetControl, isTakenRunRequest } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreConformanceOptions, StoreScenario } from '../types.js';
import { pollUntil, using } from '../util.js';

/** A fleet store that decides run requests: exactly-once requests. */
type DecidingStore = Store &
  FleetStore &
  Required<Pick<FleetStore, 'decideRunRequest' | 'releaseRunRequest' | 'getRunRequest'>>;

/** Tolerance between the store's clock and this process's, ms (same machine in the suite). */
const CLOCK_TOLERANCE_MS = 5_000;

/** The store as one that decides run requests; fails with the missing methods named otherwise. */
function decidingStore(store: Store): DecidingStore {
  const missing = ['decideRunRequest', 'releaseRunRequest', 'getRunRequest'].filter(
    (m) => typeof (store as unknown as Record<string, unknown>)[m] !== 'function',
  );
  if (!hasFleetControl(store) || !decidesRunRequests(store) || missing.length > 0) {
    throw new Error(
      `the store does not decide run requests: implement ${missing.join(', ') || 'fleet control'} (exactly-once run requests, see FleetStore in core)`,
    );
  }
  return store as DecidingStore;
}

async function withDecidingStores(
  options: StoreConformanceOptions,
  body: (one: DecidingStore, two: DecidingStore) => Promise<void>,
): Promise<void> {
  await using(options.create, async (fixture) => {
    const one = decidingStore(await fixture.newStore());
    const two = decidingStore(await fixture.newStore());
    await body(one, two);
  });
}

/** Takes `jobs` and checks that every request returned carries a take. */
async function take(
  store: DecidingStore,
  jobs: string[],
  instanceId: string,
  leaseMs?: number,
): Promise<TakenRunRequest[]> {
  const taken = await store.takeRunRequests(jobs, instanceId, leaseMs ? { leaseMs } : undefined);
  for (const request of taken) {
    expect(isTakenRunRequest(request), `a take returns takeId with request ${request.id}`).toBe(
      true,
    );
  }
  return taken as TakenRunRequest[];
}

/** The request fields of a taken request (its take left out). */
export function requestOf(request: RunRequest | TakenRunRequest): RunRequest {
  const { id, job, requestedBy, requestedAt, data } = request;
  return { id, job, requestedBy, requestedAt, data };
}

async function stateOf(store: DecidingStore, id: string): Promise<RunRequestState> {
  const state = await store.getRunRequest(id);
  if (!state) throw new Error(`getRunRequest(${id}) answered null for a stored request`);
  return state;
}

/**
 * Store scenario: a take holds a request until it is decided, released, or the take's lease
 * ends; only the current take decides it; a decision is answered again to the same take; the
 * request's `data` comes back as it was given.
 */
export const runRequestsLeased: StoreScenario = {
  title: 'run requests: a take holds a request until decided, released or its lease ends; data',
  timeoutMs: 60_000,
  async run(options) {
    await withDecidingStores(options, async (one, two) => {
      const data = { report: 'monthly', ids: [1, 2, 3], note: 'ünïcødé ✓', deep: { on: true } };
      const first = await one.requestRun({ job: 'lease-a', requestedBy: 'alice', data });
      expect(first.data, 'data comes back as given').toEqual(data);
      const second = await one.requestRun({ job: 'lease-a', requestedBy: 'bob' });
      expect(second.data, 'no data: null').toBeNull();
      expect(await stateOf(two, first.id)).toMatchObject({
        ...requestOf(first),
        ...{ state: 'pending', takes: 0, takenBy: null, takenUntil: null },
        ...{ decidedAt: null, fireAt: null, decidedBy: null },
      });

      const before = Date.now();
      const taken = await take(one, ['lease-a'], 'inst-a', 60_000);
      expect(taken.map(requestOf), 'oldest first, data kept').toEqual([first, second]);
      const [takeA, takeB] = taken as [TakenRunRequest, TakenRunRequest];
      expect(takeA.takeId, 'each take has its own token').not.toBe(takeB.takeId);
      expect(takeA.takes).toBe(1);
      expect(Math.abs(takeA.takenUntil - (before + 60_000))).toBeLessThan(CLOCK_TOLERANCE_MS);
      expect(await take(two, ['lease-a'], 'inst-b'), 'a held request is not taken').toEqual([]);
      expect(await stateOf(two, first.id)).toMatchObject({
        ...{ state: 'taken', takes: 1, takenBy: 'inst-a', takenUntil: takeA.takenUntil },
      });

      const decision = { fireAt: 1_700_000_000_123, instanceId: 'inst-a' };
      expect(
        await two.decideRunRequest(first.id, 'not-its-take', decision),
        'only the current take decides',
      ).toBe(false);
      expect(await one.decideRunRequest(first.id, takeA.takeId, decision)).toBe(true);
      expect(
        await two.decideRunRequest(first.id, takeA.takeId, decision),
        'a retried decision of the same take (lost reply) is answered true again',
      ).toBe(true);
      const decided = await stateOf(two, first.id);
      expect(decided).toMatchObject({ state: 'decided', fireAt: decision.fireAt });
      expect(decided.decidedBy).toBe('inst-a');
      expect(Math.abs((decided.decidedAt ?? 0) - Date.now())).toBeLessThan(CLOCK_TOLERANCE_MS);
      await one.releaseRunRequest(first.id, takeA.takeId);
      expect((await stateOf(two, first.id)).state, 'a decided request stays decided').toBe(
        'decided',
      );

      await two.releaseRunRequest(second.id, 'not-its-take');
      expect(
        await take(two, ['lease-a'], 'inst-b'),
        'a release by another take is a no-op',
      ).toEqual([]);
      await one.releaseRunRequest(second.id, takeB.takeId);
      expect((await stateOf(two, second.id)).state, 'released: pending').toBe('pending');
      const again = await take(two, ['lease-a'], 'inst-b');
      expect(again.map(requestOf), 'a released request is taken at once').toEqual([second]);
      expect(again[0]!.takes, 'the second take counts').toBe(2);
      expect(again[0]!.takeId).not.toBe(takeB.takeId);
      expect(
        await one.decideRunRequest(second.id, takeB.takeId, decision),
        'a replaced take decides nothing',
      ).toBe(false);
      expect(
        await two.decideRunRequest(second.id, again[0]!.takeId, { ...decision, instanceId: 'b' }),
      ).toBe(true);
      expect(await take(one, ['lease-a'], 'inst-a'), 'decided requests are never taken').toEqual(
        [],
      );

      // a take's lease ends: another instance takes the request, the first take is replaced
      const third = await one.requestRun({ job: 'lease-a', requestedBy: 'carol' });
      const [short] = await take(one, ['lease-a'], 'inst-a', 400);
      expect(short && requestOf(short)).toEqual(third);
      const retaken = await pollUntil(
        async () => {
          const got = await take(two, ['lease-a'], 'inst-b', 60_000);
          return got.length > 0 ? { got, at: Date.now() } : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 50, message: 'the request taken again after its lease' },
      );
      expect(retaken.got.map(requestOf)).toEqual([third]);
      expect(retaken.at, 'not taken again before the lease ended').toBeGreaterThanOrEqual(
        short!.takenUntil - CLOCK_TOLERANCE_MS / 10,
      );
      expect(retaken.got[0]!.takes).toBe(2);
      expect(
        await one.decideRunRequest(third.id, short!.takeId, decision),
        'the take whose lease ended was replaced: it decides nothing',
      ).toBe(false);

      // a take whose lease ended but that nobody replaced may still decide
      const fourth = await one.requestRun({ job: 'lease-b', requestedBy: 'dave' });
      const [lapsed] = await take(one, ['lease-b'], 'inst-a', 300);
      await pollUntil(async () => (await stateOf(two, fourth.id)).state === 'pending', {
        timeoutMs: 15_000,
        message: 'the take of lease-b to end',
      });
      expect(await one.decideRunRequest(fourth.id, lapsed!.takeId, decision)).toBe(true);

      expect(await two.decideRunRequest('no-such-request', 'x', decision)).toBe(false);
      await two.releaseRunRequest('no-such-request', 'x');
      expect(await two.getRunRequest('no-such-request')).toBeNull();
      await expect(
        one.takeRunRequests(['lease-a'], 'inst-a', { leaseMs: 0 }),
        'a take lease must be positive',
      ).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'leaseMs' });
      await expect(
        one.requestRun({ job: 'lease-a', requestedBy: 'eve', data: 'x'.repeat(70_000) }),
        'data over 64 KiB',
      ).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'data' });
    });
  },
};

/**
 * Store scenario: four clients take with leases of 1 ms (so takes replace each other all the
 * time) and decide what they took: every request is decided by exactly one take.
 */
export const runRequestsDecidedOnce: StoreScenario = {
  title: 'run requests: takes that keep replacing each other decide every request exactly once',
  timeoutMs: 90_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const stores = await Promise.all(
        [0, 1, 2, 3].map(async () => decidingStore(await fixture.newStore())),
      );
      const ids = new Set<string>();
      for (let i = 0; i < 24; i++) {
        const request = await stores[i % 4]!.requestRun({ job: `race-${i % 3}`, requestedBy: 'u' });
        ids.add(request.id);
      }
      const wins = new Map<string, string[]>();
      const deadline = Date.now() + 60_000;
      await Promise.all(
        stores.map(async (store, s) => {
          while (Date.now() < deadline) {
            const taken = await take(store, ['race-0', 'race-1', 'race-2'], `racer-${s}`, 1);
            if (taken.length === 0) {
              const states = await Promise.all([...ids].map((id) => store.getRunRequest(id)));
              if (states.every((state) => state?.state === 'decided')) return;
            }
            await Promise.all(
              taken.map(async (request) => {
                const decision = { fireAt: 1_000 + s, instanceId: `racer-${s}` };
                if (await store.decideRunRequest(request.id, request.takeId, decision)) {
                  wins.set(request.id, [...(wins.get(request.id) ?? []), request.takeId]);
                }
              }),
            );
          }
        }),
      );
      const twice = [...wins].filter(([, takes]) => takes.length > 1);
      expect(twice, 'requests decided by more than one take').toEqual([]);
      expect(new Set(wins.keys()), 'every request is decided').toEqual(ids);
      for (const id of ids) {
        const state = await stores[0]!.getRunRequest(id);
        const racer = Number(state?.decidedBy?.slice('racer-'.length));
        expect(state?.fireAt, `the decision stored for ${id} is its decider's`).toBe(1_000 + racer);
      }
    });
  },
};

/** Every run-request store scenario (exactly-once requests). */
export const runRequestStoreScenarios = {
  runRequestsLeased,
  runRequestsDecidedOnce,
} as const satisfies Record<string, StoreScenario>;
