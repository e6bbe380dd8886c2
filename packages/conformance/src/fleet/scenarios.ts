import {
  type Clock,
  every,
  isFleetcronError,
  type JobContext,
  type Lock,
  type LockCapabilities,
  offsetClock,
  realClock,
  Scheduler,
  subscribe,
} from '@fleetcron/core';
import { expect } from 'vitest';
import type { FleetConformanceOptions, FleetScenario, LockFixture } from '../types.js';
import { leaseFor, pollUntil, using, waitUntilTime } from '../util.js';
import { fleetControlScenarios } from './control-scenarios.js';
import { freezeScenarios } from './freeze-scenarios.js';
import { leaderModeScenarios } from './leader-mode-scenarios.js';
import { shardScenarios } from './shard-scenarios.js';
import { fleetOnBackendClock } from './skew-scenario.js';

/** Clock offsets of the three instances of the skewed-fleet scenario, ms. */
export const FLEET_OFFSETS = [-2000, 0, 3000] as const;

/** The job lease the fleet scenarios use. */
async function jobLease(options: FleetConformanceOptions, fixture: LockFixture): Promise<number> {
  const capabilities: LockCapabilities = (await fixture.newLock()).capabilities;
  return leaseFor(capabilities, options.leaseMs ?? 2000);
}

/** Starts one scheduler per instance and always stops them all. */
async function withFleet(
  instances: { lock: Lock; clock: Clock; instanceId: string }[],
  leaseMs: number,
  run: (ctx: JobContext) => unknown,
  body: () => Promise<void>,
): Promise<void> {
  const schedulers = instances.map((instance) => {
    const scheduler = new Scheduler({ ...instance, leaseMs });
    scheduler.add({ name: 'fleet-job', trigger: every(1000), run });
    return scheduler;
  });
  for (const scheduler of schedulers) scheduler.start();
  try {
    await body();
  } finally {
    await Promise.all(schedulers.map((s) => s.stop({ drainMs: 5000 })));
  }
}

/**
 * Fleet scenario 1: three schedulers whose clocks read −2 s, 0 and +3 s run a job every second
 * on the backend, in real time, for at least `fires` fires. No fire anywhere runs twice, and
 * every fire inside the observed span runs, or is skipped by policy (`busy`: the previous run
 * still held the job's lease), which must stay the exception.
 */
export const skewedFleetExactlyOnce: FleetScenario = {
  title: 'three skewed instances (−2 s, 0, +3 s): every fire in the span runs exactly once',
  timeoutMs: 120_000,
  async run(options) {
    const fires = options.fires ?? 30;
    const tag = Math.random().toString(36).slice(2, 8);
    await using(options.create, async (fixture) => {
      const leaseMs = await jobLease(options, fixture);
      const instances = [];
      for (const offset of FLEET_OFFSETS) {
        const clock = offsetClock(realClock, offset);
        const instanceId = `skew${offset}-${tag}`;
        instances.push({ lock: await fixture.newLock({ clock }), clock, instanceId });
      }
      const ours = new Set(instances.map((i) => i.instanceId));
      const runs = new Map<number, string[]>();
      const busy = new Set<number>();
      const trail = new Map<number, string[]>();
      const unsubscribe = subscribe((event) => {
        if (!ours.has(event.instanceId) || event.fireAt === undefined) return;
        const detail = 'reason' in event ? ` ${String(event.reason)}` : '';
        trail.set(event.fireAt, [
          ...(trail.get(event.fireAt) ?? []),
          `${event.instanceId} ${event.type}${detail}`,
        ]);
        if (event.type === 'claim.busy') busy.add(event.fireAt);
      });
      const record = (ctx: JobContext) => {
        const fireAt = ctx.fireAt.getTime();
        runs.set(fireAt, [...(runs.get(fireAt) ?? []), ctx.instanceId]);
      };
      let startedAt = 0;
      let endedAt = 0;
      try {
        await withFleet(instances, leaseMs, record, async () => {
          startedAt = Date.now();
          await waitUntilTime(startedAt + (fires + 4) * 1000, `${fires} fires of the fleet`);
          endedAt = Date.now();
        });
      } finally {
        unsubscribe();
      }

      for (const [fireAt, by] of runs) {
        expect(by, `fire ${new Date(fireAt).toISOString()} ran on ${by.join(', ')}`).toHaveLength(
          1,
        );
        expect(busy.has(fireAt), `fire ${fireAt} both ran and was answered busy`).toBe(false);
      }
      // Fires fully inside the span: after every instance started, and early enough that the
      // slowest clock (−2 s) had claimed them before the fleet stopped.
      const first = Math.ceil((startedAt + 1000) / 1000) * 1000;
      const last = Math.floor((endedAt - 2000) / 1000) * 1000;
      const missed: string[] = [];
      let ran = 0;
      for (let t = first; t <= last; t += 1000) {
        if (runs.has(t)) ran++;
        else if (!busy.has(t)) {
          missed.push(
            `${new Date(t).toISOString()}: ${(trail.get(t) ?? ['no events']).join('; ')}`,
          );
        }
      }
      const span = (last - first) / 1000 + 1;
      expect(missed, 'fires inside the span that neither ran nor were skipped as busy').toEqual([]);
      expect(span, 'fires observed').toBeGreaterThanOrEqual(fires);
      expect(ran, `fires that ran, of ${span} (the rest were busy)`).toBeGreaterThanOrEqual(
        Math.ceil(span / 2),
      );
    });
  },
};

/** The run of the holder that gets paused. */
interface PausedRun {
  instanceId: string;
  fireAt: number;
  token: number;
  /** When its signal was aborted (test clock), `null` before. */
  abortedAt: number | null;
  reason: unknown;
}

/** A lock whose calls hang while `frozen()` is true: what a paused process looks like. */
function freezable(inner: Lock, frozen: () => boolean, thawed: Promise<void>): Lock {
  const gate = async <T>(call: () => Promise<T>): Promise<T> => {
    if (frozen()) await thawed;
    return call();
  };
  return {
    backend: inner.backend,
    capabilities: inner.capabilities,
    windowMs: inner.windowMs,
    claim: (request) => gate(() => inner.claim(request)),
    extend: (lease, ms) => gate(() => inner.extend(lease, ms)),
    release: (lease) => gate(() => inner.release(lease)),
    inspect: (key) => inner.inspect(key),
  };
}

/**
 * Fleet scenario 2: the holder of a fire is paused past its lease (its lock calls hang, so it
 * can neither renew nor release). Its signal is aborted before the next fire runs elsewhere, and
 * the new holder's token is higher.
 */
export const pausedHolderAborted: FleetScenario = {
  title:
    'a holder paused past its lease: its signal is aborted, the next fire runs elsewhere with a higher token',
  timeoutMs: 60_000,
  async run(options) {
    const scale = options.timeScale ?? 1;
    await using(options.create, async (fixture) => {
      const leaseMs = await jobLease(options, fixture);
      let thaw = () => {};
      const thawed = new Promise<void>((resolve) => {
        thaw = resolve;
      });
      const state: { paused: PausedRun | null } = { paused: null };
      const later: { instanceId: string; fireAt: number; token: number; startedAt: number }[] = [];
      const instances = [];
      for (const id of ['holder-a', 'holder-b']) {
        const lock = freezable(
          await fixture.newLock(),
          () => state.paused?.instanceId === id,
          thawed,
        );
        instances.push({ lock, clock: realClock, instanceId: id });
      }
      const run = async (ctx: JobContext) => {
        const fireAt = ctx.fireAt.getTime();
        if (state.paused === null) {
          const me: PausedRun = {
            instanceId: ctx.instanceId,
            fireAt,
            token: ctx.token,
            abortedAt: null,
            reason: null,
          };
          state.paused = me;
          await new Promise<void>((resolve) => {
            const done = () => {
              me.abortedAt = Date.now();
              me.reason = ctx.signal.reason;
              resolve();
            };
            if (ctx.signal.aborted) done();
            else ctx.signal.addEventListener('abort', done, { once: true });
          });
          return;
        }
        later.push({ instanceId: ctx.instanceId, fireAt, token: ctx.token, startedAt: Date.now() });
      };
      try {
        await withFleet(instances, leaseMs, run, async () => {
          await pollUntil(() => state.paused?.abortedAt != null && later.length > 0, {
            timeoutMs: (leaseMs * 3 + 15_000) * scale,
            intervalMs: 50,
            message: 'the paused holder to be aborted and a later fire to run',
          });
          thaw();
        });
      } finally {
        thaw();
      }
      const holder = state.paused!;
      const next = later[0]!;
      expect(next.instanceId, 'the next fire runs on another instance').not.toBe(holder.instanceId);
      expect(next.fireAt).toBeGreaterThan(holder.fireAt);
      expect(next.token, "the new holder's token is higher").toBeGreaterThan(holder.token);
      expect(
        holder.abortedAt,
        "the paused holder's signal is aborted before the new holder starts",
      ).toBeLessThanOrEqual(next.startedAt);
      expect(
        isFleetcronError(holder.reason, 'LEASE_LOST'),
        `abort reason: ${String(holder.reason)}`,
      ).toBe(true);
    });
  },
};

/** Every fleet scenario, in the order `runFleetConformance` registers them. */
export const fleetScenarios = {
  skewedFleetExactlyOnce,
  fleetOnBackendClock,
  pausedHolderAborted,
  ...freezeScenarios,
  ...fleetControlScenarios,
  ...leaderModeScenarios,
  ...shardScenarios,
} as const satisfies Record<string, FleetScenario>;

/** Name of a fleet scenario. */
export type FleetScenarioName = keyof typeof fleetScenarios;
