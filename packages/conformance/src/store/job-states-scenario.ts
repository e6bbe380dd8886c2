import type { Execution } from '@fleetcron/core';
import { expect } from 'vitest';
import type { StoreScenario } from '../types.js';
import { using } from '../util.js';

/**
 * Store scenario: `getJobStates` (optional) answers `states[i]` as `getJobState(jobs[i])` would:
 * paused (with who and when) and resumed jobs, a job with a last outcome, a job never seen, a
 * repeated name, names that need escaping, more names than one scheduler batch (600), and an
 * empty array. A store without it is checked to leave it out (the scheduler then reads singly).
 */
export const jobStatesAsJobState: StoreScenario = {
  title: 'getJobStates (when present) answers as getJobState of each, in order',
  timeoutMs: 60_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const store = await fixture.newStore();
      if (store.getJobStates === undefined) {
        expect(store.getJobStates, 'a store without getJobStates').toBeUndefined();
        return;
      }
      expect(await store.getJobStates([])).toEqual([]);
      await store.setPaused('states-paused', true, { by: 'ops' });
      await store.setPaused('states-resumed', true, { by: 'ops' });
      await store.setPaused('states-resumed', false);
      const done: Execution = {
        ...{ id: 'states-row', job: 'states-done', fireAt: 1_000, status: 'succeeded' },
        ...{ attempt: 1, instanceId: 'instance-1', token: 1, startedAt: 1_005, finishedAt: 1_050 },
        ...{ error: null, reason: null },
      };
      await store.record(done);
      const odd = ['it\'s "quoted" ü 🙂', 'comma,and;semi', 'back\\slash', ''];
      for (const name of odd) await store.setPaused(name, true);
      const bulk = Array.from({ length: 600 }, (_, i) => `states-bulk-${i}`);
      for (const name of bulk.filter((_, i) => i % 97 === 0)) await store.setPaused(name, true);
      const names = [
        ...['states-paused', 'states-resumed', 'states-done', 'states-never', 'states-paused'],
        ...odd,
        ...bulk,
      ];
      const states = await store.getJobStates(names);
      expect(states).toHaveLength(names.length);
      for (const [i, name] of names.entries()) {
        expect(states[i], `getJobStates()[${i}] (${JSON.stringify(name)})`).toEqual(
          await store.getJobState(name),
        );
      }
      expect(states[0]).toMatchObject({ job: 'states-paused', paused: true, pausedBy: 'ops' });
      expect(states[2]).toMatchObject({ job: 'states-done', lastStatus: 'succeeded' });
      expect(states[3]).toMatchObject({ job: 'states-never', paused: false, lastStatus: null });
      // a change is seen by the next read (no stale answers)
      await store.setPaused('states-never', true);
      expect((await store.getJobStates(['states-never']))[0]?.paused).toBe(true);
    });
  },
};
