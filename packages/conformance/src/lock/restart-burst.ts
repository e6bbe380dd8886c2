import { every, type FleetcronEvent, type Lock, Scheduler, subscribe } from '@fleetcron/core';
import { expect } from 'vitest';
import type { LockFaultScenario, LockFixture, ServerFaults } from '../types.js';
import { leaseFor, pollUntil, spyOnCrashes, using, waitUntilTime } from '../util.js';

/** Jobs due every second on every instance during the restart. */
const JOBS = 5;
/** Scheduler instances sharing the jobs. */
const INSTANCES = 3;
/** How long the fleet runs after the server is back, ms. */
const AFTER_MS = 8_000;
/** Time the fleet gets after the server is ready before every fire must run again, ms. */
const RECOVERY_MS = 3_000;

/** One run that started, as the job itself appended it. */
interface LedgerEntry {
  job: string;
  fireAt: number;
  instanceId: string;
  token: number;
}

const fireId = (job: string, fireAt: number) => `${job}@${new Date(fireAt).toISOString()}`;

/**
 * Restarts the server with an outage longer than the scheduler's give-up bound for a claim (the
 * lease), so that claims sent meanwhile are given up on: stop, wait, start. Servers without
 * separate stop/start controls get a plain restart.
 */
async function restartSlowly(server: ServerFaults, leaseMs: number): Promise<void> {
  if (!server.stop || !server.start) {
    await server.restart();
    return;
  }
  const stoppedAt = Date.now();
  await server.stop();
  await waitUntilTime(stoppedAt + leaseMs + 1000, 'an outage longer than the claim give-up bound');
  await server.start();
}

/** Starts one scheduler per lock, each running every job; stops them all after `body`. */
async function withFleet(
  fixture: LockFixture,
  tag: string,
  leaseMs: number,
  ledger: LedgerEntry[],
  body: () => Promise<void>,
): Promise<void> {
  const schedulers: Scheduler[] = [];
  for (let i = 0; i < INSTANCES; i++) {
    const lock: Lock = await fixture.newLock();
    const scheduler = new Scheduler({ lock, instanceId: `burst${i}-${tag}`, leaseMs });
    for (let j = 0; j < JOBS; j++) {
      scheduler.add({
        name: `burst-${j}`,
        trigger: every(1000),
        run: (ctx) => {
          const { job, instanceId, token } = ctx;
          ledger.push({ job, fireAt: ctx.fireAt.getTime(), instanceId, token });
        },
      });
    }
    schedulers.push(scheduler);
  }
  for (const scheduler of schedulers) scheduler.start();
  try {
    await body();
  } finally {
    await Promise.all(schedulers.map((s) => s.stop({ drainMs: 5000 })));
  }
}

/**
 * Fault scenario: the server restarts while real `Scheduler`s are claiming a burst of fires (five
 * jobs due every second on three instances). Judged from an append-only ledger of the runs that
 * started, the scheduler's `fire.skipped` events and `lock.inspect()` afterwards:
 *
 * - no fire is recorded as won by an instance that did not run it (a claim given up on must not
 *   take effect later, or its late win must be withdrawn: otherwise the fire is lost fleet-wide);
 * - every fire from shortly after the server is ready runs exactly once;
 * - durable backends run no fire twice, across the restart too.
 */
export const restartDuringClaimBurst: LockFaultScenario = {
  title:
    'server restart during a burst of claims: no fire burnt by a claim given up on; fires after it run',
  timeoutMs: 150_000,
  async run(options, faults) {
    const spy = spyOnCrashes();
    const tag = Math.random().toString(36).slice(2, 8);
    const ledger: LedgerEntry[] = [];
    const trail = new Map<string, string[]>();
    const unsubscribe = subscribe((event: FleetcronEvent) => {
      if (!event.instanceId.endsWith(tag) || event.fireAt === undefined) return;
      const detail = 'reason' in event ? ` ${String(event.reason)}` : '';
      const id = fireId(event.job, event.fireAt);
      trail.set(id, [...(trail.get(id) ?? []), `${event.instanceId} ${event.type}${detail}`]);
    });
    try {
      await using(faults.create, async (fixture) => {
        const leaseMs = leaseFor(options.capabilities, 2000);
        let restartAt = 0;
        let readyAt = 0;
        let endAt = 0;
        await withFleet(fixture, tag, leaseMs, ledger, async () => {
          await pollUntil(() => ledger.length >= JOBS * 2, {
            timeoutMs: 30_000 * (options.timeScale ?? 1),
            message: 'the fleet to run fires before the restart',
          });
          restartAt = Date.now();
          await restartSlowly(faults.server, leaseMs);
          readyAt = Date.now();
          await waitUntilTime(readyAt + AFTER_MS, 'the fleet to run after the restart');
          endAt = Date.now();
        });

        const runsOf = new Map<string, LedgerEntry[]>();
        for (const entry of ledger) {
          const id = fireId(entry.job, entry.fireAt);
          runsOf.set(id, [...(runsOf.get(id) ?? []), entry]);
        }
        const describe = (id: string) => `${id}: ${(trail.get(id) ?? ['no events']).join('; ')}`;

        // 1. Every won claim record belongs to an instance that ran the fire.
        const inspector = await fixture.newLock();
        const burnt: string[] = [];
        for (let j = 0; j < JOBS; j++) {
          const job = `burst-${j}`;
          for (const record of (await inspector.inspect(job)).fires) {
            if (record.outcome !== 'won') continue;
            const id = fireId(job, record.fireAt);
            const ran = (runsOf.get(id) ?? []).some((r) => r.instanceId === record.owner);
            if (!ran) burnt.push(`won by ${record.owner}, not run by it: ${describe(id)}`);
          }
        }
        expect(burnt, 'fires recorded as won by an instance that skipped them').toEqual([]);

        // 2. Fires from shortly after the server is ready run exactly once.
        const first = Math.ceil((readyAt + RECOVERY_MS * (options.timeScale ?? 1)) / 1000) * 1000;
        const last = Math.floor((endAt - 2000) / 1000) * 1000;
        expect(last, 'fires observed after the restart').toBeGreaterThanOrEqual(first);
        const notOnce: string[] = [];
        for (let j = 0; j < JOBS; j++) {
          for (let t = first; t <= last; t += 1000) {
            const id = fireId(`burst-${j}`, t);
            const count = runsOf.get(id)?.length ?? 0;
            if (count !== 1) notOnce.push(`ran ${count} times: ${describe(id)}`);
          }
        }
        expect(notOnce, 'fires after the restart that did not run exactly once').toEqual([]);

        // 3. No fire ran twice (durable backends keep their claims across the restart).
        const twice = [...runsOf]
          .filter(([, runs]) => runs.length > 1)
          .filter(([, runs]) => options.capabilities.durable || runs[0]!.fireAt >= readyAt)
          .map(([id]) => describe(id));
        expect(twice, 'fires that ran twice').toEqual([]);
        expect(restartAt, 'the restart happened during the burst').toBeGreaterThan(0);
      });
      expect(spy.caught, 'no unhandled rejection or uncaught exception').toEqual([]);
    } finally {
      unsubscribe();
      spy.dispose();
    }
  },
};
