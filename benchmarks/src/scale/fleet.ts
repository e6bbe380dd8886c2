import { at, type FleetcronEvent, Scheduler, subscribe } from '@fleetcron/core';
import type { OwnedLock } from '../backends/types.js';

/** One instance of the fleet scenario. */
export interface FleetInstance {
  index: number;
  owned: OwnedLock;
}

/** What a group of fleet instances observed. */
export interface FleetResult {
  /** One entry per run: job index, instance index, lateness (run start − scheduled), ms. */
  runs: { job: number; instance: number; latenessMs: number }[];
  /** Job indices for which a claim threw (claim.failed). */
  failedJobs: number[];
  won: number;
  lost: number;
  busy: number;
  failed: number;
  /** Whether every instance resolved every job's claim before the deadline. */
  complete: boolean;
  /** ms from the fire time until the last claim of this group was answered. */
  settledAfterMs: number;
}

/** Job name of job `j` under `prefix`. */
export const fleetJobName = (prefix: string, job: number): string => `${prefix}-${job}`;

/**
 * Runs `jobs` one-shot jobs, all due at `fireAt`, on each of `instances` (a real
 * {@link Scheduler} each, with its own lock and connection), waits until every instance has
 * an answer for every job's claim (or `deadlineMs` after the fire), then stops the schedulers.
 */
export async function runFleet(
  instances: readonly FleetInstance[],
  options: { jobs: number; fireAt: number; prefix: string; deadlineMs: number },
): Promise<FleetResult> {
  const { jobs, fireAt, prefix, deadlineMs } = options;
  const result: FleetResult = {
    runs: [],
    failedJobs: [],
    won: 0,
    lost: 0,
    busy: 0,
    failed: 0,
    complete: false,
    settledAfterMs: 0,
  };
  const byId = new Map<string, number>();
  const answered = new Map<string, number>();
  const jobIndex = (name: string): number => Number(name.slice(prefix.length + 1));
  let pending = jobs * instances.length;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const unsubscribe = subscribe((event: FleetcronEvent) => {
    if (!byId.has(event.instanceId) || !event.job?.startsWith(`${prefix}-`)) return;
    const type = event.type;
    if (type === 'claim.won' || type === 'claim.lost' || type === 'claim.busy') {
      result[type === 'claim.won' ? 'won' : type === 'claim.lost' ? 'lost' : 'busy']++;
    } else if (type === 'claim.failed') {
      result.failed++;
      result.failedJobs.push(jobIndex(event.job));
    } else return;
    answered.set(event.instanceId, (answered.get(event.instanceId) ?? 0) + 1);
    if (--pending === 0) {
      result.settledAfterMs = Date.now() - fireAt;
      resolveDone();
    }
  });
  const schedulers = instances.map(({ index, owned }) => {
    const scheduler = new Scheduler({
      lock: owned.lock,
      instanceId: `fleet-i${index}`,
      leaseMs: 30_000,
    });
    byId.set(scheduler.instanceId, index);
    for (let job = 0; job < jobs; job++) {
      scheduler.add({
        name: fleetJobName(prefix, job),
        trigger: at(fireAt),
        run: (ctx) => {
          result.runs.push({
            job,
            instance: index,
            latenessMs: ctx.startedAt.getTime() - ctx.fireAt.getTime(),
          });
        },
      });
    }
    return scheduler;
  });
  try {
    for (const scheduler of schedulers) scheduler.start();
    const timeout = fireAt + deadlineMs - Date.now();
    let timer: NodeJS.Timeout | undefined;
    result.complete = await Promise.race([
      done.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), Math.max(0, timeout));
      }),
    ]);
    clearTimeout(timer);
    if (!result.complete) result.settledAfterMs = Date.now() - fireAt;
  } finally {
    unsubscribe();
    await Promise.all(schedulers.map((s) => s.stop({ drainMs: 5_000 })));
  }
  return result;
}
