import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import { pollUntil } from '../util.js';
import type { ChildJob } from './child-config.js';
import { type InstanceChild, requestRunFromChild } from './child-process.js';
import {
  allExecutions,
  childInstances,
  formatExecutions,
  stopChildren,
  withControlSetup,
} from './control-harness.js';

/** The job only runs on request: its trigger fires once a day (never inside the scenario). */
const DAILY_MS = 86_400_000;
/** A run request must start within this much of being made (times `timeScale`). */
export const RUN_REQUEST_WITHIN_MS = 2000;

/**
 * A fleet of three instances in child processes; a fourth process that registers no job asks
 * for a run through a `FleetClient` over the store. From the ledger and the store's history:
 * the job runs exactly once fleet-wide, within 2 s of the request, recorded with who asked.
 */
export const runRequestFromAnotherProcess: FleetScenario = {
  title:
    'a run request from a separate process that registers no job runs exactly once within 2 s on a fleet of 3',
  timeoutMs: 120_000,
  run: (options) =>
    withControlSetup(options, async (setup) => {
      const { ledger, store, tag, scale } = setup;
      const job: ChildJob = { name: 'on-request', everyMs: DAILY_MS };
      const ids = [1, 2, 3].map((n) => `fleet${n}-${tag}`);
      const by = `requester-${tag}`;
      let children: InstanceChild[] = [];
      try {
        children = await childInstances(setup, ids, [job], false);
        await pollUntil(
          async () => {
            const live = await store.instances();
            return ids.every((id) => live.some((i) => i.instanceId === id));
          },
          { timeoutMs: 15_000 * scale, message: 'the three instances in the registry' },
        );
        await requestRunFromChild({ job: job.name, by, ledgerPath: ledger.path }, store, 60_000);
        await pollUntil(
          () => ledger.read().some((e) => e.kind === 'start' && e.requestedBy === by),
          { timeoutMs: 15_000 * scale, message: 'the requested run to start' },
        );
        // two more seconds: a second run of the request (taken twice) would start meanwhile
        const until = Date.now() + 2000 * scale;
        await pollUntil(() => Date.now() > until, {
          timeoutMs: 2000 * scale + 5000,
          message: 'two more seconds of the fleet running',
        });
        const failures = await stopChildren(children, scale);
        expect(failures, 'every instance process stops cleanly').toEqual([]);
      } finally {
        await Promise.all(children.map((c) => c.kill()));
      }

      const entries = ledger.read();
      const request = entries.find((e) => e.kind === 'request');
      expect(request, 'the requester wrote its request line').toBeDefined();
      // manual runs only: a daily fire at midnight UTC may fall inside the scenario
      const runs = entries.filter(
        (e) => e.kind === 'start' && e.job === job.name && e.requestedBy !== null,
      );
      const described = runs.map((e) => `${e.instance} requestedBy=${e.requestedBy}`);
      expect(described, 'the job ran exactly once fleet-wide, as the request').toEqual([
        `${runs[0]?.instance} requestedBy=${by}`,
      ]);
      expect(ids, 'it ran on an instance of the fleet').toContain(runs[0]!.instance);
      const latency = runs[0]!.mono - request!.mono;
      expect(latency, 'ms from the request to the run').toBeLessThanOrEqual(
        RUN_REQUEST_WITHIN_MS * scale,
      );
      const executions = await allExecutions(store, job.name);
      const rows = formatExecutions(executions);
      const manual = executions.filter((e) => (e.requestedBy ?? null) !== null);
      expect(
        manual.map((e) => [e.status, e.requestedBy]),
        `history: one manual run, with who asked:\n${rows}`,
      ).toEqual([['succeeded', by]]);
    }),
};
