import type { FleetStore, InstanceRecord, RegisteredJob, RunRequest, Store } from '@fleetcron/core';
import { hasFleetControl } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreConformanceOptions, StoreScenario } from '../types.js';
import { pollUntil, using } from '../util.js';
import { requestOf } from './run-request-scenarios.js';

/** The store as a fleet-control store; fails with the missing methods named otherwise. */
function fleetStore(store: Store): Store & FleetStore {
  if (!hasFleetControl(store)) {
    const missing = ['heartbeat', 'instances', 'leave', 'requestRun', 'takeRunRequests', 'listJobs']
      .filter((m) => typeof (store as unknown as Record<string, unknown>)[m] !== 'function')
      .join(', ');
    throw new Error(`the store lacks fleet control: implement ${missing} (see FleetStore in core)`);
  }
  return store;
}

async function withFleetStores(
  options: StoreConformanceOptions,
  body: (one: Store & FleetStore, other: () => Promise<Store & FleetStore>) => Promise<void>,
): Promise<void> {
  await using(options.create, async (fixture) => {
    await body(fleetStore(await fixture.newStore()), async () =>
      fleetStore(await fixture.newStore()),
    );
  });
}

/** A registered job for heartbeats. */
export function registeredJob(name: string, overrides: Partial<RegisteredJob> = {}): RegisteredJob {
  return {
    name,
    trigger: 'cron(*/5 * * * * Europe/Berlin)',
    spec: { kind: 'cron', expression: '*/5 * * * *', tz: 'Europe/Berlin' },
    definitionHash: '0123456789abcdef',
    leaseMs: 30_000,
    overlap: 'skip',
    catchUp: { max: 3, within: 3_600_000 },
    ...overrides,
  };
}

/** A heartbeat record of instance `id`. */
export function instanceRecord(
  id: string,
  overrides: Partial<InstanceRecord> = {},
): InstanceRecord {
  return {
    instanceId: id,
    host: 'host-α',
    pid: 4242,
    version: '0.1.0',
    startedAt: Date.UTC(2026, 0, 1),
    heartbeatMs: 10_000,
    clock: { offsetMs: -12, rttMs: 3 },
    jobs: [
      // registeredAt orders definitions in a rolling deploy: it must round-trip too
      registeredJob('report', { registeredAt: Date.UTC(2026, 0, 1, 0, 0, 5) }),
      registeredJob('работа 🚀', { spec: null, trigger: 'custom' }),
      // a job with excluded fires: the calendar's spec is nested JSON the store keeps as is
      registeredJob('holiday-aware', {
        exclude: {
          description: 'exclusions(1 date, 1 weekly window in Europe/Berlin)',
          spec: {
            kind: 'exclusions',
            zone: 'Europe/Berlin',
            dates: [{ date: '2026-12-25', reason: 'holiday: Christmas Day — 1. Weihnachtstag' }],
            weekly: [{ days: [6, 0], from: '22:00', to: '06:00' }],
          },
        },
      }),
    ],
    ...overrides,
  };
}

/** Store fleet scenario 1: heartbeat, listing from another client, update, leave. */
export const registryLifecycle: StoreScenario = {
  title: 'registry: heartbeats are listed by another client, updated in place, removed by leave()',
  timeoutMs: 30_000,
  async run(options) {
    await withFleetStores(options, async (one, newStore) => {
      const two = await newStore();
      expect(await two.instances(), 'a fresh namespace has no instances').toEqual([]);
      const a = instanceRecord('instance-b');
      const b = instanceRecord('instance-a', { clock: null, jobs: [] });
      const before = Date.now();
      await one.heartbeat(a);
      await one.heartbeat(b);
      const listed = await two.instances();
      expect(
        listed.map((i) => i.instanceId),
        'instances() is sorted by instanceId',
      ).toEqual(['instance-a', 'instance-b']);
      const { lastSeenAt, ...rest } = listed[1]!;
      expect(rest, 'every field of the record round-trips').toEqual(a);
      expect(listed[0]).toMatchObject(b);
      expect(typeof lastSeenAt, 'lastSeenAt is epoch ms').toBe('number');
      expect(Math.abs(lastSeenAt - before), 'lastSeenAt is about now').toBeLessThan(60_000);

      const changed = instanceRecord('instance-b', { jobs: [registeredJob('other')] });
      await two.heartbeat(changed);
      const again = await one.instances();
      expect(again, 'a heartbeat replaces the record, never duplicates it').toHaveLength(2);
      expect(again[1]!.jobs, 'the newest heartbeat wins').toEqual(changed.jobs);
      expect(again[1]!.lastSeenAt).toBeGreaterThanOrEqual(lastSeenAt);

      await two.leave('instance-a');
      await two.leave('never-registered');
      expect(
        (await one.instances()).map((i) => i.instanceId),
        'leave() removes at once',
      ).toEqual(['instance-b']);
    });
  },
};

/** Store fleet scenario 2: an instance unseen for 3 heartbeats is gone, a live one stays. */
export const registryExpiry: StoreScenario = {
  title: 'registry: an instance unseen for 3 × heartbeatMs disappears, one heartbeating stays',
  timeoutMs: 30_000,
  async run(options) {
    const scale = options.timeScale ?? 1;
    const heartbeatMs = Math.round(400 * scale);
    await withFleetStores(options, async (one, newStore) => {
      const two = await newStore();
      const sent = performance.now();
      await one.heartbeat(instanceRecord('short-lived', { heartbeatMs }));
      await one.heartbeat(instanceRecord('long-lived', { heartbeatMs: 600_000 }));
      expect((await two.instances()).map((i) => i.instanceId)).toEqual([
        'long-lived',
        'short-lived',
      ]);
      await pollUntil(
        async () => !(await two.instances()).some((i) => i.instanceId === 'short-lived'),
        {
          timeoutMs: 3 * heartbeatMs + 10_000 * scale,
          intervalMs: 50,
          message: `an instance unseen for 3 × ${heartbeatMs} ms to disappear from instances()`,
        },
      );
      const gone = performance.now() - sent;
      expect(
        gone,
        `an instance is live for 3 heartbeats (gone after ${Math.round(gone)} ms)`,
      ).toBeGreaterThanOrEqual(3 * heartbeatMs - 250);
      expect(
        (await one.instances()).map((i) => i.instanceId),
        'the live one stays',
      ).toEqual(['long-lived']);
      await one.heartbeat(instanceRecord('short-lived', { heartbeatMs }));
      expect(
        (await two.instances()).map((i) => i.instanceId),
        'a heartbeat brings it back',
      ).toEqual(['long-lived', 'short-lived']);
    });
  },
};

/** Store fleet scenario 3: run requests are consumed exactly once under concurrent takers. */
export const runRequestsOnce: StoreScenario = {
  title: 'run requests: 4 concurrent takers × 40 requests, each taken exactly once, by job',
  timeoutMs: 60_000,
  async run(options) {
    await withFleetStores(options, async (one, newStore) => {
      const takers = [one, await newStore(), await newStore(), await newStore()];
      const first = await one.requestRun({ job: 'run-a', requestedBy: 'alice ✓' });
      expect(first).toMatchObject({ job: 'run-a', requestedBy: 'alice ✓' });
      expect(typeof first.id).toBe('string');
      expect(Math.abs(first.requestedAt - Date.now()), 'requestedAt is about now').toBeLessThan(
        60_000,
      );
      const second = await one.requestRun({ job: 'run-a', requestedBy: 'bob' });
      expect(
        (await takers[1]!.takeRunRequests(['run-a'], 'taker-1')).map(requestOf),
        'one take returns every pending request of the job, oldest first',
      ).toEqual([first, second]);
      expect(await takers[2]!.takeRunRequests(['run-a'], 'taker-2'), 'nothing left').toEqual([]);

      const other = await one.requestRun({ job: 'run-other', requestedBy: 'carol' });
      const requested = new Map<string, RunRequest>();
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const store = takers[i % takers.length]!;
          const request = await store.requestRun({
            job: i % 2 ? 'run-a' : 'run-b',
            requestedBy: `u${i}`,
          });
          requested.set(request.id, request);
        }),
      );
      expect(requested.size, 'request ids are unique').toBe(40);
      const taken: RunRequest[] = [];
      await Promise.all(
        takers.map(async (store, t) => {
          for (let round = 0; round < 30; round++) {
            taken.push(...(await store.takeRunRequests(['run-a', 'run-b'], `taker-${t}`)));
          }
        }),
      );
      taken.push(...(await one.takeRunRequests(['run-a', 'run-b'], 'sweeper')));
      const ids = taken.map((r) => r.id);
      expect(ids.length - new Set(ids).size, 'requests taken more than once').toBe(0);
      expect(new Set(ids), 'every request is taken').toEqual(new Set(requested.keys()));
      for (const request of taken) expect(requestOf(request)).toEqual(requested.get(request.id));
      expect(
        (await one.takeRunRequests(['run-other'], 'taker')).map(requestOf),
        'a request for another job is left for its takers',
      ).toEqual([other]);
      expect(await one.takeRunRequests([], 'taker'), 'no jobs, nothing taken').toEqual([]);
    });
  },
};

/** Store fleet scenario 4: pause/resume from a client that registered nothing; listJobs. */
export const pausedFromForeignProcess: StoreScenario = {
  title: 'pause from a foreign client (registered nothing): paused with who and when, listJobs',
  timeoutMs: 30_000,
  async run(options) {
    await withFleetStores(options, async (instance, newStore) => {
      const admin = await newStore();
      await instance.heartbeat(instanceRecord('worker-1'));
      await instance.getJobState('only-read');
      const before = Date.now();
      await admin.setPaused('report', true, { by: 'admin:alice' });
      const paused = await instance.getJobState('report');
      expect(paused, 'a foreign pause is seen with who asked (pausedBy)').toMatchObject({
        job: 'report',
        paused: true,
        pausedBy: 'admin:alice',
      });
      expect(Math.abs((paused.pausedAt ?? 0) - before), 'pausedAt is about now').toBeLessThan(
        60_000,
      );
      await admin.setPaused('never-defined', true);
      expect(await instance.getJobState('never-defined')).toMatchObject({
        paused: true,
        pausedBy: null,
      });
      await instance.record({
        id: '00000000-0000-4000-8000-000000000001',
        job: 'finished',
        fireAt: 1000,
        status: 'succeeded',
        attempt: 1,
        instanceId: 'worker-1',
        token: 1,
        startedAt: 1001,
        finishedAt: 1002,
        error: null,
      });
      const jobs = await admin.listJobs();
      expect(
        jobs.map((j) => j.job),
        'listJobs: jobs with state, by name (a job only read is not listed)',
      ).toEqual(['finished', 'never-defined', 'report']);
      expect(jobs[2]).toEqual(paused);
      expect(jobs[0]).toMatchObject({ paused: false, lastStatus: 'succeeded', lastFireAt: 1000 });

      await admin.setPaused('report', false, { by: 'admin:bob' });
      expect(await instance.getJobState('report'), 'resume clears who and when').toMatchObject({
        paused: false,
        pausedBy: null,
        pausedAt: null,
      });
    });
  },
};

/** Store fleet scenario 5: manual executions keep who asked; history filters by status. */
export const manualRunsAndStatusFilter: StoreScenario = {
  title: 'history keeps requestedBy of manual runs and filters by status, paged',
  timeoutMs: 30_000,
  async run(options) {
    await withFleetStores(options, async (store) => {
      const job = 'manual';
      const base = Date.UTC(2026, 0, 1);
      const make = (i: number, status: 'succeeded' | 'failed', requestedBy: string | null) => ({
        id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        job,
        fireAt: base + i * 1000,
        status,
        attempt: 1,
        instanceId: 'worker',
        token: i,
        startedAt: base + i * 1000 + 1,
        finishedAt: base + i * 1000 + 2,
        error: status === 'failed' ? 'Error: x' : null,
        reason: null,
        requestedBy,
      });
      const all = Array.from({ length: 12 }, (_, i) =>
        make(i, i % 3 === 0 ? 'failed' : 'succeeded', i % 4 === 0 ? `user ${i}` : null),
      );
      for (const e of all) await store.record(e);
      const [newest] = (await store.history(job, { limit: 1 })).executions;
      expect({ ...newest, requestedBy: newest?.requestedBy ?? null }).toEqual(all[11]);
      const byId = new Map(
        (await store.history(job, { limit: 100 })).executions.map((e) => [e.id, e]),
      );
      for (const e of all) {
        expect(byId.get(e.id)?.requestedBy ?? null, `requestedBy of ${e.id}`).toBe(e.requestedBy);
      }
      const failedIds: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 10; page++) {
        const result = await store.history(job, { limit: 2, cursor, status: 'failed' });
        failedIds.push(...result.executions.map((e) => e.id));
        cursor = result.nextCursor;
        if (!cursor) break;
      }
      const expectedFailed = all
        .filter((e) => e.status === 'failed')
        .reverse()
        .map((e) => e.id);
      expect(failedIds, 'status filter, newest first, across pages').toEqual(expectedFailed);
      const both = await store.history(job, { limit: 100, status: ['failed', 'succeeded'] });
      expect(both.executions).toHaveLength(12);
      const none = await store.history(job, { status: ['running'] });
      expect(none).toEqual({ executions: [], nextCursor: null });
    });
  },
};

/** Store fleet scenario 6: with the push capability, a request wakes a watcher on another client. */
export const runRequestPush: StoreScenario = {
  title: 'watchRunRequests (when present): a request wakes a watcher on another client',
  timeoutMs: 30_000,
  async run(options) {
    await withFleetStores(options, async (one, newStore) => {
      const two = await newStore();
      if (typeof two.watchRunRequests !== 'function') {
        expect(two.watchRunRequests, 'no push capability: instances poll').toBeUndefined();
        return;
      }
      const woken: string[] = [];
      const unsubscribe = two.watchRunRequests((job) => woken.push(job));
      try {
        // The subscription may take a moment to be active: request until one is seen.
        await pollUntil(
          async () => {
            await one.requestRun({ job: 'pushed', requestedBy: 'cli' });
            return woken.includes('pushed');
          },
          { timeoutMs: 10_000, intervalMs: 200, message: 'a watcher to hear of a run request' },
        );
      } finally {
        unsubscribe();
      }
      const after = woken.length;
      await one.requestRun({ job: 'pushed', requestedBy: 'cli' });
      await one.takeRunRequests(['pushed'], 'drain');
      expect(woken.length, 'unsubscribe stops the listener').toBe(after);
    });
  },
};

/** Every fleet-control store scenario. */
export const fleetStoreScenarios = {
  registryLifecycle,
  registryExpiry,
  runRequestsOnce,
  pausedFromForeignProcess,
  manualRunsAndStatusFilter,
  runRequestPush,
} as const satisfies Record<string, StoreScenario>;

/** Name of a fleet-control store scenario. */
export type FleetStoreScenarioName = keyof typeof fleetStoreScenarios;
