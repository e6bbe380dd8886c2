import { type CatchUpSpec, every, type Trigger } from '@fleetcron/core';
import type { RemoteElectorInfo } from '../elector/remote-elector.js';
import type { ProcessClient } from '../types.js';
import type { FleetInstanceModule } from './instance.js';
import type { FreezePoint } from './instrument.js';
import type { RemoteLockInfo, RemoteStoreInfo } from './remote.js';

/** One job of a child instance: `every(everyMs)`, running the ledger job for `workMs`. */
export interface ChildJob {
  name: string;
  everyMs: number;
  /** Instead of `every(everyMs)`: exactly these fires (epoch ms, ascending), then none. */
  fires?: number[];
  /**
   * Instead of `every(everyMs)`: one fire, on the first whole second at least this many ms after
   * the job is built (in the process that builds it).
   */
  onceInMs?: number;
  /** How long each run works, ms (default `JOB_WORK_MS`). */
  workMs?: number;
  /** `true`: every run throws after its work (recorded `failed`), for the watchdog scenario. */
  fails?: boolean;
  /** The job's overlap policy (default: the scheduler's). */
  overlap?: 'skip' | 'allow';
  /** The job's catch-up policy (default: the scheduler's). */
  catchUp?: CatchUpSpec;
  /** What the fleet does with a fire whose holder died (default: the scheduler's). */
  onHolderLost?: 'record' | 'rerun';
  /** The job's `shards` (default: not sharded). */
  shards?: number | 'each';
  /**
   * This many copies of the job (a fleet with many jobs, passed in a few bytes): jobs
   * `${name}-0` … `${name}-${copies - 1}`, alike but for the name. Default: the job once, as `name`.
   */
  copies?: number;
}

/** The configuration of `child-instance.ts`, passed as JSON in `argv[2]`. */
export interface InstanceChildConfig {
  instanceId: string;
  leaseMs: number;
  jobs: ChildJob[];
  /** Where the instance freezes (`null`: never). */
  point: FreezePoint | null;
  /**
   * `true`: the child builds its instance, says `ready` and starts it only on the parent's `go`
   * (so several children start together); default: it starts at once.
   */
  startOnGo?: boolean;
  /** Heartbeat interval of the instance, ms (default: the scheduler's). */
  heartbeatMs?: number;
  /** Leader mode: the term length, ms; the elector is the parent's (see `startInstanceChild`). */
  leaderTtlMs?: number;
  /** Sharded jobs: the scheduler's `shardGraceMs` (default: the scheduler's). */
  shardGraceMs?: number;
  /** Set by `startInstanceChild` when it was given an elector. */
  elector?: RemoteElectorInfo;
  ledgerPath: string;
  instanceModule: FleetInstanceModule;
  lock: ChildBackend<RemoteLockInfo>;
  /** The fleet's store; absent: the instance runs lock only (no store). */
  store?: ChildBackend<RemoteStoreInfo>;
  /** Adds `fleetWatchdog` to the instance's jobs (needs `store`), notifying a webhook or SMTP. */
  watchdog?: ChildWatchdog;
  /** The scheduler's `runRequestLeaseMs` (default: the scheduler's). */
  runRequestLeaseMs?: number;
  /** The scheduler's `runRequestPollMs` (default: the scheduler's). */
  runRequestPollMs?: number;
  /**
   * A fault right after the instance's store first takes run requests (a `take` line is written
   * first): `hang` (the take's reply never reaches the scheduler: the parent SIGKILLs the
   * process), `loseReply` (the reply is lost once, the process lives on), `stop` (the instance's
   * `stop()` begins as the reply arrives).
   */
  afterTake?: AfterTakeFault;
}

/** See {@link InstanceChildConfig.afterTake}. */
export type AfterTakeFault = 'hang' | 'loseReply' | 'stop';

/** The fleet watchdog of a child instance (see `watchdog-scenarios.ts`). */
export interface ChildWatchdog {
  /**
   * The receiver's URL. `http://…`: `webhookNotifier`, the requests carry
   * `x-fleetcron-test-instance: <instanceId>`. `smtp://host:port`: `emailNotifier` to that SMTP
   * server, sent from `<instanceId>@fleetcron.test` (the envelope sender names the instance).
   */
  url: string;
  /** The watchdog's `every`, ms. */
  everyMs: number;
  /** The watchdog's `settleMs`. */
  settleMs: number;
}

/**
 * A child's lock or store: the parent's client, reached over IPC (`remote`, described by `Info`),
 * or a client the child opens itself on the backend (`own`).
 */
export type ChildBackend<Info> = { remote: Info } | { own: ProcessClient };

/** Marker the child writes to stdout when it blocks at its freeze point. */
export const FROZEN_MARKER = 'FROZEN';

/**
 * A trigger with exactly `fires` (ascending epoch ms), then none: a dense schedule that ends,
 * so a restarted fleet has missed fires and no regular fire to race its catch-up.
 */
export function listTrigger(fires: number[]): Trigger {
  // the same for every instance given as many fires: the definition hash of a custom trigger is
  // its description, and instances may build the list at different moments
  const description = `fires(${fires.length})`;
  return {
    next(after) {
      const fire = fires.find((t) => t > after.getTime());
      return fire === undefined ? null : new Date(fire);
    },
    describe: () => description,
  };
}

/** The jobs `job` stands for: itself, or its {@link ChildJob.copies} (each without `copies`). */
export function expandCopies(job: ChildJob): ChildJob[] {
  const { copies, ...one } = job;
  if (copies === undefined) return [one];
  return Array.from({ length: copies }, (_, i) => ({ ...one, name: `${job.name}-${i}` }));
}

/** The trigger of `job`. */
export function childTrigger(job: ChildJob): Trigger {
  if (job.onceInMs !== undefined) {
    return listTrigger([Math.ceil((Date.now() + job.onceInMs) / 1000) * 1000]);
  }
  return job.fires ? listTrigger(job.fires) : every(job.everyMs);
}
