import type { MemoryStore } from '@fleetcron/core';
import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import { pollUntil } from '../util.js';
import type { ChildJob } from './child-config.js';
import type { InstanceChild } from './child-process.js';
import {
  allExecutions,
  at,
  childInstances,
  formatExecutions,
  localInstance,
  withControlSetup,
} from './control-harness.js';
import type { FleetInstance } from './instance.js';

/** The holder's runs work far longer than the scenario: only its death ends them. */
const HOLD_MS = 600_000;

/**
 * A child process holds a fire of two jobs (one `onHolderLost: 'record'`, one `'rerun'`) and is
 * SIGKILLed mid-run; two instances in the test process run on. From the store's history and the
 * ledger: both killed fires are recorded `lease_lost` (no row stays `running`); the `'record'`
 * fire never runs again; the `'rerun'` fire runs exactly once more, on another instance, with
 * `ctx.recovery === true`.
 */
export const holderKilledMidRun: FleetScenario = {
  title:
    "holder SIGKILLed mid-run: its fire is recorded lease_lost; 'record' never reruns it, 'rerun' reruns it exactly once elsewhere with ctx.recovery",
  timeoutMs: 120_000,
  run: (options) =>
    withControlSetup(options, async (setup) => {
      const { ledger, store, tag, scale, leaseMs } = setup;
      if (setup.capabilities.durableMark === undefined) {
        // the fleet finds lost holders through catch-up claims: a lock without a mark cannot
        expect(setup.capabilities.durableMark, 'a lock without a catch-up mark').toBeUndefined();
        return;
      }
      // one fire per job and no other: no later fire of the job can meet the rerun's claim
      const jobs = (fire: { onceInMs: number } | { fires: number[] }, workMs?: number) =>
        (['record', 'rerun'] as const).map(
          (policy): ChildJob => ({
            name: `holder-lost-${policy}`,
            everyMs: 1000,
            ...fire,
            onHolderLost: policy,
            ...(workMs === undefined ? {} : { workMs }),
          }),
        );
      const names = jobs({ fires: [] }).map((j) => j.name);
      const holderId = `holder-${tag}`;
      let holder: InstanceChild | undefined;
      const others: FleetInstance[] = [];
      const killed = new Map<string, { fireAt: number; token: number }>();
      try {
        const started = await childInstances(
          setup,
          [holderId],
          jobs({ onceInMs: 1000 }, HOLD_MS),
          false,
        );
        const child = started[0]!;
        holder = child;
        await pollUntil(
          () => {
            for (const e of ledger.read()) {
              if (e.kind === 'start' && e.instance === holderId && !killed.has(e.job ?? '')) {
                killed.set(e.job ?? '', { fireAt: e.fireAt ?? 0, token: e.token ?? 0 });
              }
            }
            return killed.size === names.length;
          },
          { timeoutMs: (leaseMs + 20_000) * scale, message: 'the holder to start both jobs' },
        );
        await pollUntil(
          async () => {
            for (const name of names) {
              const rows = await allExecutions(store, name);
              const fire = killed.get(name)!;
              if (!rows.some((r) => r.fireAt === fire.fireAt && r.status === 'running')) {
                return false;
              }
            }
            return true;
          },
          { timeoutMs: 10_000 * scale, message: "the holder's runs to be recorded running" },
        );
        await child.kill();
        for (const n of [1, 2]) {
          const same = jobs({ fires: [] }).map((j) => ({
            ...j,
            fires: [killed.get(j.name)!.fireAt],
          }));
          const instance = await localInstance(setup, `after${n}-${tag}`, same);
          instance.start();
          others.push(instance);
        }
        await withHistories(store, names, () =>
          pollUntil(
            async () => {
              for (const name of names) {
                const rows = await allExecutions(store, name);
                const fire = killed.get(name)!;
                const row = rows.find((r) => r.instanceId === holderId && r.fireAt === fire.fireAt);
                if (row?.status !== 'lease_lost') return false;
              }
              return ledger
                .read()
                .some((e) => e.kind === 'start' && e.job === 'holder-lost-rerun' && e.recovery);
            },
            {
              timeoutMs: (leaseMs * 3 + 20_000) * scale,
              message: 'both killed fires recorded lease_lost and the rerun to start',
            },
          ),
        );
        // run on for two more leases: a second rerun, or a rerun of the 'record' job, would show
        const until = Date.now() + 2 * leaseMs;
        await pollUntil(() => Date.now() > until, {
          timeoutMs: 2 * leaseMs + 5000,
          message: 'two more leases of the fleet running',
        });
      } finally {
        await holder?.kill();
        await Promise.all(others.map((o) => o.stop()));
      }

      const entries = ledger.read();
      for (const name of names) {
        const fire = killed.get(name)!;
        const executions = await allExecutions(store, name);
        const rows = formatExecutions(executions);
        const running = executions.filter((e) => e.status === 'running');
        expect(
          running.map((e) => at(e.fireAt)),
          `${name}: rows still running:\n${rows}`,
        ).toEqual([]);
        const held = executions.filter(
          (e) => e.instanceId === holderId && e.fireAt === fire.fireAt && e.token === fire.token,
        );
        expect(
          held.map((e) => e.status),
          `${name}: the killed holder's fire ${at(fire.fireAt)} is recorded lease_lost:\n${rows}`,
        ).toEqual(['lease_lost']);
        const again = entries.filter(
          (e) =>
            e.kind === 'start' &&
            e.job === name &&
            e.instance !== holderId &&
            (e.fireAt === fire.fireAt || e.recovery),
        );
        const described = again.map(
          (e) =>
            `${e.instance} fire ${at(e.fireAt)} token ${e.token} recovery=${e.recovery} requestedBy=${e.requestedBy}`,
        );
        if (name === 'holder-lost-record') {
          expect(described, `${name}: the killed fire never runs again`).toEqual([]);
          continue;
        }
        expect(described, `${name}: the killed fire runs exactly once more`).toHaveLength(1);
        const rerun = again[0]!;
        expect(rerun.recovery, `${name}: the rerun sees ctx.recovery === true`).toBe(true);
        expect(
          rerun.requestedBy ?? '',
          `${name}: the rerun names the killed fire (${described[0]})`,
        ).toContain(new Date(fire.fireAt).toISOString());
      }
    }),
};

/** Runs `wait`; when it fails, the jobs' histories are added to its message. */
async function withHistories(
  store: MemoryStore,
  names: string[],
  wait: () => Promise<unknown>,
): Promise<void> {
  try {
    await wait();
  } catch (error) {
    if (error instanceof Error) {
      for (const name of names) {
        error.message += `\nhistory of ${name}:\n${formatExecutions(await allExecutions(store, name))}`;
      }
    }
    throw error;
  }
}
