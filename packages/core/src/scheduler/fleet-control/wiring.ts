import type { Clock } from '../../clock.js';
import type { ClockOffset } from '../../fleet-clock/offset-estimator.js';
import type { Logger } from '../../logger.js';
import type { Execution } from '../../store.js';
import type { FireKind, FireRun, HistoryWriter, ManualRuns } from '../fire/index.js';
import type { NormalizedJob } from '../job/index.js';
import type { ResolvedOptions } from '../options.js';
import type { TimerQueue } from '../timing/index.js';
import { FleetControl } from './fleet-control.js';
import { sweepHolderLost } from './holder-lost.js';

/** What the scheduler lends its fleet control. */
export interface FleetHost {
  readonly options: ResolvedOptions;
  readonly queue: TimerQueue;
  readonly log: Logger;
  readonly clock: Clock;
  readonly history: HistoryWriter;
  readonly manual: ManualRuns;
  /** The registered jobs. */
  jobs(): NormalizedJob[];
  /** The job of that name while the scheduler runs, else `undefined`. */
  runningJob(name: string): NormalizedJob | undefined;
  /** Fire times of `job` being handled here. */
  activeFires(job: string): number[];
  launch(job: NormalizedJob, fireAt: number, kind: FireKind): FireRun;
  clockOffset(): ClockOffset | null;
}

/**
 * Builds the scheduler's fleet control (`null` without a fleet-control store): heartbeat, drift
 * watch, run requests run as manual fires, and the holder-lost sweep (after each heartbeat, and
 * after a fire claimed here).
 */
export function wireFleet(host: FleetHost): FleetControl | null {
  const { options, queue, log, clock, history, manual } = host;
  const { lock, store, instanceId, heartbeatMs, runRequestPollMs: pollMs } = options;
  if (!store) return null;
  const sweep = {
    ...{ lock, store, history, clock, queue, instanceId, log },
    activeFires: (job: string) => host.activeFires(job),
    // retried while the job is busy, for up to the lock's window (at least a lease)
    // a lost part runs again alone; a lost 'each' run (local work of a dead instance) does not
    rerun: (job: NormalizedJob, lost: Execution) => {
      if (lost.shard?.each) return;
      void manual.rerun(job, lost.fireAt, Math.max(lock.windowMs, job.leaseMs), lost.shard);
    },
  };
  return FleetControl.create(store, {
    ...{ queue, instanceId, heartbeatMs, pollMs, log },
    now: () => clock.now(),
    jobs: () => host.jobs(),
    clockOffset: () => host.clockOffset(),
    runRequest: (request) => void manual.runRequest(request, host.runningJob(request.job)),
    sweep: (jobs, instances) => sweepHolderLost(sweep, jobs, instances),
  });
}
