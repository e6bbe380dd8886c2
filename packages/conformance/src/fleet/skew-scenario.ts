import {
  type ClockOffset,
  every,
  type JobContext,
  offsetClock,
  realClock,
  Scheduler,
  subscribe,
} from '@fleetcron/core';
import { expect } from 'vitest';
import type { FleetScenario } from '../types.js';
import { leaseFor, using, waitUntilTime } from '../util.js';

/** Clock offsets of the instances of the backend-clock scenario, ms (one far beyond the others). */
export const BACKEND_CLOCK_OFFSETS = [-2000, 0, 3000, 60_000] as const;

/** One run, as the ledger holds it. */
interface LedgerRow {
  fireAt: number;
  instanceId: string;
  /** When the run started by the backend's clock: the host clock (backend and test share it). */
  startedAt: number;
}

/**
 * Fleet scenario: four schedulers whose clocks read −2 s, 0, +3 s and +60 s run a job every
 * second, in real time. Every fire in the observed span runs exactly once (or is skipped as
 * busy), and for locks judged by the backend's clock (`clock: 'backend'`) none starts before its
 * time by the backend's clock minus the lock's `earlyToleranceMs`, judged from an append-only
 * ledger stamped with the backend's time (the host clock: the suite runs next to its server).
 * Each instance's `clockOffset()` estimate is checked against its real skew (plus the lock's
 * `backendTimeBoundMs` when the backend's time is estimated, as etcd's is). For other `clock:
 * 'client'` locks the fleet's clock is each instance's own: only exactly-once is checked.
 */
export const fleetOnBackendClock: FleetScenario = {
  title:
    "four skewed instances (−2 s, 0, +3 s, +60 s): every fire runs exactly once, none before its time by the backend's clock",
  timeoutMs: 120_000,
  async run(options) {
    const fires = Math.min(options.fires ?? 20, 20);
    const tag = Math.random().toString(36).slice(2, 8);
    await using(options.create, async (fixture) => {
      const capabilities = (await fixture.newLock()).capabilities;
      const leaseMs = leaseFor(capabilities, options.leaseMs ?? 2000);
      const ledger: LedgerRow[] = [];
      const record = (ctx: JobContext) => {
        ledger.push({
          fireAt: ctx.fireAt.getTime(),
          instanceId: ctx.instanceId,
          startedAt: Date.now(),
        });
      };
      const schedulers: { scheduler: Scheduler; offset: number }[] = [];
      for (const offset of BACKEND_CLOCK_OFFSETS) {
        const clock = offsetClock(realClock, offset);
        const lock = await fixture.newLock({ clock });
        const scheduler = new Scheduler({
          lock,
          clock,
          leaseMs,
          instanceId: `clock${offset}-${tag}`,
        });
        // per-fire leases: a fire never waits on another fire's lease (no `busy` skips), so every
        // fire of the span must run
        scheduler.add({
          name: 'backend-clock-job',
          trigger: every(1000),
          overlap: 'allow',
          run: record,
        });
        schedulers.push({ scheduler, offset });
      }
      // what each instance said about each fire: explains a fire that did not run
      const ours = new Set(schedulers.map(({ scheduler }) => scheduler.instanceId));
      const trail = new Map<number, string[]>();
      const missedBy = new Map<number, Set<string>>();
      const unsubscribe = subscribe((event) => {
        if (!ours.has(event.instanceId) || typeof event.fireAt !== 'number') return;
        if (event.type === 'fire.scheduled' || event.type === 'lease.renewed') return;
        if (event.type === 'fire.missed') {
          missedBy.set(
            event.fireAt,
            (missedBy.get(event.fireAt) ?? new Set()).add(event.instanceId),
          );
        }
        const detail = 'reason' in event ? ` ${String(event.reason)}` : '';
        const line = `${event.instanceId} ${event.type}${detail}`;
        trail.set(event.fireAt, [...(trail.get(event.fireAt) ?? []), line]);
      });
      let startedAt = 0;
      let endedAt = 0;
      const offsets: (ClockOffset | null)[] = [];
      try {
        for (const { scheduler } of schedulers) scheduler.start();
        startedAt = Date.now();
        await waitUntilTime(startedAt + (fires + 3) * 1000, `${fires} fires of the skewed fleet`);
        endedAt = Date.now();
        for (const { scheduler } of schedulers) offsets.push(scheduler.clockOffset());
      } finally {
        await Promise.all(schedulers.map(({ scheduler }) => scheduler.stop({ drainMs: 5000 })));
        unsubscribe();
      }

      const byFire = new Map<number, LedgerRow[]>();
      for (const row of ledger) byFire.set(row.fireAt, [...(byFire.get(row.fireAt) ?? []), row]);
      for (const [fireAt, rows] of byFire) {
        expect(
          rows.map((r) => r.instanceId),
          `fire ${new Date(fireAt).toISOString()} ran exactly once`,
        ).toHaveLength(1);
      }
      // inside the span: after every instance started and before the slowest clock stopped
      const first = Math.ceil((startedAt + 1000) / 1000) * 1000;
      const last = Math.floor((endedAt - 2500) / 1000) * 1000;
      // All four instances share this process: when its event loop stalls past a fire, every
      // one of them wakes late and (by the late-fire rule) reports it `fire.missed` instead of
      // claiming it. Such a fire was lost to the process, not to the lock; any other is a failure.
      const absent: string[] = [];
      let stalled = 0;
      for (let t = first; t <= last; t += 1000) {
        if (byFire.has(t)) continue;
        if (missedBy.get(t)?.size === ours.size) stalled++;
        else
          absent.push(
            `${new Date(t).toISOString()}: ${(trail.get(t) ?? ['no events']).join('; ')}`,
          );
      }
      expect(absent, 'fires inside the span that did not run').toEqual([]);
      expect(stalled, 'fires every instance missed (the process stalled)').toBeLessThanOrEqual(2);
      expect((last - first) / 1000 + 1, 'fires observed').toBeGreaterThanOrEqual(fires - 2);

      // judged by the backend's clock: read (`clock: 'backend'`) or estimated (etcd)
      if (capabilities.clock !== 'backend' && capabilities.backendTimeBoundMs === undefined) return;
      const tolerance = capabilities.earlyToleranceMs ?? 0;
      const early = ledger
        .filter((r) => r.startedAt < r.fireAt - tolerance)
        .map((r) => `${r.instanceId} started ${r.fireAt - r.startedAt} ms before ${r.fireAt}`);
      expect(early, `runs that started more than ${tolerance} ms before their time`).toEqual([]);
      schedulers.forEach(({ offset }, i) => {
        const estimate = offsets[i];
        expect(estimate, `instance at ${offset} ms has a clock estimate`).not.toBeNull();
        // the backend is this host's clock: the true offset is −offset
        const error = Math.abs(estimate!.offsetMs + offset);
        expect(
          error,
          `instance at ${offset} ms: estimate ${estimate!.offsetMs}`,
        ).toBeLessThanOrEqual(estimate!.boundMs + 2 + (capabilities.backendTimeBoundMs ?? 0));
      });
    });
  },
};
