import {
  isFleetcronError,
  MemoryLock,
  type ScheduleContext,
  type ScheduleDefinition,
  Scheduler,
  ScheduleServer,
  type ScheduleStore,
  type Store,
} from '@fleetcron/core';
import { hasSchedules } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreFixture } from '../types.js';
import { pollUntil, using } from '../util.js';

/** Options of `runScheduleStoreConformance`: a store with stored schedules. */
export interface ScheduleStoreConformanceOptions {
  /** Backend name, used in test titles: `${name} schedule store conformance`. */
  name: string;
  /** Makes a fresh, isolated namespace; `newStore()` clients must have the schedule methods. */
  create(): Promise<StoreFixture>;
  /**
   * Kills the push connection(s) of the fixture's watchers (a real fault: the server drops the
   * connection), or says why the backend has none to kill. The lost-notification scenario is
   * registered skipped with that reason.
   */
  dropPush: ((fixture: StoreFixture) => Promise<void>) | { unsupported: string };
  /** Multiplies the suite's deadlines for slow backends. Default 1. */
  timeScale?: number;
}

/** One stored-schedule scenario. */
export interface ScheduleStoreScenario {
  title: string;
  timeoutMs: number;
  run(options: ScheduleStoreConformanceOptions): Promise<void>;
}

/** The store as a schedule store; fails naming the missing methods otherwise. */
function scheduleStore(store: Store): Store & ScheduleStore {
  if (!hasSchedules(store)) {
    throw new Error(
      'the store lacks stored schedules: implement createSchedule, replaceSchedule, removeSchedule, getSchedule, listSchedules (see ScheduleStore in core)',
    );
  }
  return store;
}

async function withTwoClients(
  options: ScheduleStoreConformanceOptions,
  body: (
    one: Store & ScheduleStore,
    two: Store & ScheduleStore,
    fixture: StoreFixture,
  ) => Promise<void>,
): Promise<void> {
  await using(options.create, async (fixture) => {
    const one = scheduleStore(await fixture.newStore());
    const two = scheduleStore(await fixture.newStore());
    await body(one, two, fixture);
  });
}

const definition = (data: ScheduleDefinition['data'], every = 3_600_000): ScheduleDefinition => ({
  handler: 'conformance.work',
  trigger: { kind: 'every', ms: every, anchor: 0 },
  data,
  enabled: true,
  options: {},
});

/** A schedule written by one client reads the same from another; tombstones keep the version. */
export const scheduleRoundTrip: ScheduleStoreScenario = {
  title:
    'a schedule written by one client reads the same from another; a removed id keeps its version',
  timeoutMs: 30_000,
  async run(options) {
    await withTwoClients(options, async (one, two) => {
      const data = { tenant: 'acme', zone: 'Europe/Berlin', list: [1, 'zwei', { drei: null }] };
      const created = await one.createSchedule('tenant/acme', definition(data), { by: 'alice' });
      expect(created, 'create').toMatchObject({
        id: 'tenant/acme',
        version: 1,
        data,
        createdBy: 'alice',
      });
      expect(await two.getSchedule('tenant/acme'), 'read by another client').toEqual(created);
      const dup = await two
        .createSchedule('tenant/acme', definition(null), { by: 'bob' })
        .catch((e) => e);
      expect(isFleetcronError(dup, 'DUPLICATE_SCHEDULE'), `a second create: ${String(dup)}`).toBe(
        true,
      );
      const v2 = await two.replaceSchedule('tenant/acme', definition('v2'), {
        by: 'bob',
        expectedVersion: 1,
      });
      expect(v2, 'replace').toMatchObject({
        version: 2,
        data: 'v2',
        createdBy: 'alice',
        updatedBy: 'bob',
      });
      await one.removeSchedule('tenant/acme', { by: 'carol', expectedVersion: 2 });
      expect(await two.getSchedule('tenant/acme'), 'a removed schedule reads as null').toBeNull();
      expect((await two.listSchedules()).schedules, 'a removed schedule is not listed').toEqual([]);
      const again = await two.createSchedule('tenant/acme', definition('again'), { by: 'dave' });
      expect(again.version, 'an id created again continues past its removed version').toBe(4);
      expect(
        (await one.getSchedule('tenant/acme'))?.version,
        'version read by the other client',
      ).toBe(4);
    });
  },
};

/** Two clients update from one version: exactly one wins, every round. */
export const concurrentScheduleUpdates: ScheduleStoreScenario = {
  title: 'two clients update a schedule from the same version: exactly one wins (20 rounds)',
  timeoutMs: 60_000,
  async run(options) {
    await withTwoClients(options, async (one, two) => {
      await one.createSchedule('raced', definition(0), { by: 'setup' });
      for (let round = 1; round <= 20; round++) {
        const results = await Promise.allSettled([
          one.replaceSchedule('raced', definition(`one-${round}`), {
            by: 'one',
            expectedVersion: round,
          }),
          two.replaceSchedule('raced', definition(`two-${round}`), {
            by: 'two',
            expectedVersion: round,
          }),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won.length, `round ${round}: exactly one update wins`).toBe(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(
          isFleetcronError(lost.reason, 'SCHEDULE_CONFLICT'),
          `round ${round}: the loser gets SCHEDULE_CONFLICT, got ${String(lost.reason)}`,
        ).toBe(true);
        const stored = await one.getSchedule('raced');
        expect(stored?.version, `round ${round}: the version moved by one`).toBe(round + 1);
      }
    });
  },
};

interface LedgerRun {
  fireAt: number;
  version: number;
  data: unknown;
  finished: boolean;
}

/**
 * A change while a fire of the old version runs: that run finishes with its own
 * `ctx.schedule`, the new version serves the fires after the change, no fire runs twice and none
 * from before the change runs under the new version.
 */
export const changeWhileOldFireRuns: ScheduleStoreScenario = {
  title:
    'a change while a fire of the old version runs: it finishes as old, later fires are new, none twice',
  timeoutMs: 60_000,
  async run(options) {
    const scale = options.timeScale ?? 1;
    await withTwoClients(options, async (served, admin) => {
      const runs: LedgerRun[] = [];
      const scheduler = new Scheduler({ lock: new MemoryLock() });
      const server = new ScheduleServer({
        scheduler,
        store: served,
        handlers: {
          'conformance.work': async (ctx: ScheduleContext) => {
            const run = {
              fireAt: ctx.fireAt.getTime(),
              version: ctx.schedule.version,
              data: ctx.schedule.data,
              finished: false,
            };
            runs.push(run);
            await new Promise((resolve) => setTimeout(resolve, 800));
            run.finished = true;
          },
        },
      });
      try {
        await admin.createSchedule('changing', definition('v1', 1_500), { by: 'setup' });
        await server.start();
        scheduler.start();
        await pollUntil(() => runs.length > 0, {
          timeoutMs: 10_000 * scale,
          message: 'a first run of version 1',
        });
        const running = runs[0]!;
        expect(running.finished, 'the first run is still going when the change is made').toBe(
          false,
        );
        const changed = await admin.replaceSchedule('changing', definition('v2', 1_500), {
          by: 'admin',
          expectedVersion: 1,
        });
        await pollUntil(() => runs.some((r) => r.version === 2 && r.finished), {
          timeoutMs: 15_000 * scale,
          message: 'a finished run of version 2',
        });
        await pollUntil(() => running.finished, {
          timeoutMs: 5_000 * scale,
          message: 'the old run to finish',
        });
        expect(running, 'the old run kept its own ctx.schedule').toMatchObject({
          version: 1,
          data: 'v1',
        });
        const fires = runs.map((r) => r.fireAt);
        expect(new Set(fires).size, `no fire ran twice: ${fires.join(', ')}`).toBe(fires.length);
        for (const r of runs.filter((x) => x.version === 2)) {
          expect(r.data, 'a version 2 run sees version 2 data').toBe('v2');
          expect(
            r.fireAt,
            'no fire from before the change runs as version 2',
          ).toBeGreaterThanOrEqual(changed.updatedAt);
        }
      } finally {
        await server.stop();
        await scheduler.stop({ drainMs: 2_000 });
      }
    });
  },
};

/** A change made while the watcher's push connection is dead still reaches it (resync). */
export const lostScheduleNotification: ScheduleStoreScenario = {
  title: 'a change made while the push connection is dead is applied through the resync',
  timeoutMs: 60_000,
  async run(options) {
    const drop = options.dropPush;
    if (typeof drop !== 'function') throw new Error(`no push connection: ${drop.unsupported}`);
    const scale = options.timeScale ?? 1;
    await using(options.create, async (fixture) => {
      const served = scheduleStore(await fixture.newStore());
      const admin = scheduleStore(await fixture.newStore());
      const scheduler = new Scheduler({ lock: new MemoryLock() });
      const server = new ScheduleServer({
        scheduler,
        store: served,
        resyncMs: 3_600_000, // no periodic backstop inside the scenario: push and resync only
        handlers: { 'conformance.work': () => {} },
      });
      try {
        await server.start();
        await admin.createSchedule('before', definition(null), { by: 'setup' });
        await pollUntil(() => server.served().some((s) => s.id === 'before'), {
          timeoutMs: 10_000 * scale,
          message: 'the change before the fault to be pushed',
        });
        await drop(fixture);
        await admin.replaceSchedule('before', definition('during'), {
          by: 'admin',
          expectedVersion: 1,
        });
        await admin.createSchedule('during', definition(null), { by: 'admin' });
        await pollUntil(
          () =>
            server
              .served()
              .map((s) => `${s.id}@${s.version}`)
              .join() === 'before@2,during@1',
          { timeoutMs: 20_000 * scale, message: 'the changes made while push was down (resync)' },
        );
      } finally {
        await server.stop();
        await scheduler.stop();
      }
    });
  },
};

/** Every stored-schedule scenario, by name (mutant tests pick them by name). */
export const scheduleStoreScenarios = {
  scheduleRoundTrip,
  concurrentScheduleUpdates,
  changeWhileOldFireRuns,
  lostScheduleNotification,
} satisfies Record<string, ScheduleStoreScenario>;

/** The name of a stored-schedule scenario. */
export type ScheduleStoreScenarioName = keyof typeof scheduleStoreScenarios;
