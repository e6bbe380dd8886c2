import type { Clock } from '../../clock.js';
import type { Logger } from '../../logger.js';
import type { Execution } from '../../store.js';
import type { FirePath, HistoryWriter } from '../fire/index.js';
import type { JobSlots, NormalizedJob } from '../job/index.js';
import type { LifecycleView } from '../lifecycle.js';
import type { ResolvedOptions } from '../options.js';
import type { ClockWatch, TimerQueue } from '../timing/index.js';
import { FleetControl } from './fleet-control.js';
import { sweepHolderLost } from './holder-lost.js';
import type { LiveInstances } from './live-instances.js';

/**
 * The parts fleet control works with, all built before it by the scheduler: it reads the jobs
 * and the lifecycle, starts manual fires and reruns on the fire path, and writes the live
 * instances it heartbeats. Nothing here reaches back into the scheduler.
 */
export interface FleetParts {
  readonly options: ResolvedOptions;
  readonly queue: TimerQueue;
  readonly log: Logger;
  readonly clock: Clock;
  readonly clockWatch: ClockWatch;
  readonly history: HistoryWriter;
  /** The fire path: manual fires (run requests, holder-lost reruns) and the fires in progress. */
  readonly path: Pick<FirePath, 'manual' | 'activeFireTimes'>;
  /** The registered jobs. */
  readonly slots: Pick<JobSlots, 'defs' | 'byName'>;
  readonly life: LifecycleView;
  readonly live: LiveInstances;
}

/**
 * Builds the scheduler's fleet control (`null` without a fleet-control store): heartbeat, drift
 * watch, run requests run as manual fires, and the holder-lost sweep (after each heartbeat, and
 * after a fire claimed here).
 */
export function wireFleet(parts: FleetParts): FleetControl | null {
  const { options, queue, log, clock, history, path, slots, life, live } = parts;
  const { manual } = path;
  const { lock, store, instanceId, heartbeatMs, runRequestPollMs: pollMs } = options;
  const takeLeaseMs = options.runRequestLeaseMs;
  if (!store) return null;
  const sweep = {
    ...{ lock, store, history, clock, queue, instanceId, log },
    activeFires: (job: string) => path.activeFireTimes(job),
    // retried while the job is busy, for up to the lock's window (at least a lease)
    // a lost part runs again alone; a lost 'each' run (local work of a dead instance) does not
    rerun: (job: NormalizedJob, lost: Execution) => {
      if (lost.shard?.each) return;
      void manual.rerun(job, lost.fireAt, Math.max(lock.windowMs, job.leaseMs), lost.shard);
    },
  };
  return FleetControl.create(store, {
    ...{ queue, instanceId, heartbeatMs, pollMs, takeLeaseMs, log },
    ...{ live, now: () => clock.now() },
    jobs: () => slots.defs(),
    clockOffset: () => parts.clockWatch.offset(),
    // the job of the request while the scheduler takes claims, else none (refused)
    runRequest: (request, takes) => {
      const job = life.takesClaims() ? slots.byName.get(request.job)?.def : undefined;
      void manual.runRequest(request, job, takes);
    },
    sweep: (jobs, instances) => sweepHolderLost(sweep, jobs, instances),
  });
}
