import { FleetClient, subscribe } from '@fleetcron/core';
import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import { pollUntil } from '../util.js';
import { localInstance, withControlSetup } from './control-harness.js';
import type { FleetInstance } from './instance.js';

/**
 * Two instances define `drifting` with different schedules (every 1 s and every 2 s) and
 * `agreed` identically: a `fleet.drift` event names `drifting` (never `agreed`), and
 * `FleetClient.fleet()` over the store flags `drifting` only.
 */
export const driftFlagged: FleetScenario = {
  title:
    'drift: two instances with different schedules for one name → fleet.drift and the flag in FleetClient.fleet()',
  timeoutMs: 60_000,
  run: (options) =>
    withControlSetup(options, async (setup) => {
      const { store, tag, scale } = setup;
      const ids = [`drift-a-${tag}`, `drift-b-${tag}`];
      const drifted: string[] = [];
      const unsubscribe = subscribe((event) => {
        if (event.type === 'fleet.drift' && ids.includes(event.instanceId)) drifted.push(event.job);
      });
      const instances: FleetInstance[] = [];
      try {
        for (const [i, id] of ids.entries()) {
          const instance = await localInstance(setup, id, [
            { name: 'drifting', everyMs: 1000 * (i + 1) },
            { name: 'agreed', everyMs: 1000 },
          ]);
          instance.start();
          instances.push(instance);
        }
        await pollUntil(() => drifted.includes('drifting'), {
          timeoutMs: 15_000 * scale,
          message: 'a fleet.drift event for the job with two schedules',
        });
        const view = await pollUntil(
          async () => {
            const fleet = await new FleetClient({ store }).fleet();
            return ids.every((id) => fleet.instances.some((i) => i.instanceId === id)) && fleet;
          },
          { timeoutMs: 10_000 * scale, message: 'both instances in the fleet view' },
        );
        const flags = Object.fromEntries(view.jobs.map((j) => [j.name, j.drift]));
        expect(flags, 'drift flags of the fleet view').toEqual({ agreed: false, drifting: true });
        expect(view.drift, 'the fleet view lists the drifting job').toEqual(['drifting']);
        const drifting = view.jobs.find((j) => j.name === 'drifting')!;
        expect(drifting.definitions, 'one definition per schedule').toHaveLength(2);
      } finally {
        unsubscribe();
        await Promise.all(instances.map((i) => i.stop()));
      }
      expect(
        drifted.filter((job) => job !== 'drifting'),
        'drift events for other jobs',
      ).toEqual([]);
    }),
};
