import { every, FleetClient, isFleetcronError, type Store } from '@fleetcron/core';
import { definitionHash } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreScenario } from '../types.js';
import { using } from '../util.js';
import { instanceRecord, registeredJob } from './fleet-scenarios.js';
import { requestOf } from './run-request-scenarios.js';

function everyJob(name: string, ms: number) {
  const trigger = every(ms);
  const spec = trigger.spec ?? null;
  return registeredJob(name, {
    trigger: trigger.describe(),
    spec,
    definitionHash: definitionHash({
      trigger: trigger.describe(),
      spec,
      leaseMs: 30_000,
      overlap: 'skip',
    }),
    catchUp: 'skip',
  });
}

/**
 * Store fleet scenario 7: a `FleetClient` on a client that registered nothing sees the fleet
 * (instances, drift, next fires, paused, last outcome) and steers it through this store.
 */
export const fleetClientView: StoreScenario = {
  title: 'FleetClient on a foreign client: fleet view with drift, pause, run request, history',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const worker: Store = await fixture.newStore();
      const client = new FleetClient({ store: await fixture.newStore() });
      const five = everyJob('report', 300_000);
      await worker.heartbeat?.(instanceRecord('w1', { jobs: [five] }));
      await worker.heartbeat?.(instanceRecord('w2', { jobs: [five] }));
      await worker.heartbeat?.(instanceRecord('w3', { jobs: [everyJob('report', 600_000)] }));
      await worker.record({
        id: '00000000-0000-4000-8000-00000000000a',
        job: 'report',
        fireAt: 1_000,
        status: 'failed',
        attempt: 1,
        instanceId: 'w1',
        token: 1,
        startedAt: 1_001,
        finishedAt: 1_002,
        error: 'Error: x',
        requestedBy: 'alice',
      });
      await client.pause('report', { by: 'admin:bob' });

      const before = Date.now();
      const view = await client.fleet();
      expect(view.instances.map((i) => i.instanceId)).toEqual(['w1', 'w2', 'w3']);
      expect(view.drift, 'w3 defines report differently').toEqual(['report']);
      const [report] = view.jobs;
      expect(report).toMatchObject({
        name: 'report',
        trigger: 'every(300000ms)',
        definedBy: ['w1', 'w2', 'w3'],
        paused: true,
        pausedBy: 'admin:bob',
        lastStatus: 'failed',
        lastFireAt: 1_000,
        drift: true,
      });
      expect(report!.definitions.map((d) => d.instances)).toEqual([['w1', 'w2'], ['w3']]);
      expect(report!.nextFires).toHaveLength(5);
      const first = report!.nextFires[0]!.at;
      expect(first % 300_000, 'fires on the 5-minute grid').toBe(0);
      expect(first).toBeGreaterThan(before - 1000);
      expect(first - before).toBeLessThanOrEqual(300_000 + 1000);

      const request = await client.requestRun('report', { by: 'cli' });
      expect((await worker.takeRunRequests?.(['report'], 'w1'))?.map(requestOf)).toEqual([request]);
      const unknown = await client.requestRun('nobody', { by: 'cli' }).catch((e: unknown) => e);
      expect(isFleetcronError(unknown, 'UNKNOWN_JOB'), String(unknown)).toBe(true);

      const failed = await client.history('report', { status: 'failed' });
      expect(failed.executions.map((e) => e.requestedBy)).toEqual(['alice']);
      expect((await client.history('report', { status: 'succeeded' })).executions).toEqual([]);
      await client.resume('report', { by: 'admin:bob' });
      expect((await client.fleet()).jobs[0]).toMatchObject({ paused: false, pausedBy: null });
    });
  },
};
