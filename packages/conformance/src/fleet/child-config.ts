import type { CatchUpSpec } from '@fleetcron/core';
import type { FleetInstanceModule } from './instance.js';
import type { FreezePoint } from './instrument.js';
import type { RemoteLockInfo, RemoteStoreInfo } from './remote.js';

/** One job of a child instance: `every(everyMs)`, running the ledger job for `workMs`. */
export interface ChildJob {
  name: string;
  everyMs: number;
  /** How long each run works, ms (default `JOB_WORK_MS`). */
  workMs?: number;
  /** The job's overlap policy (default: the scheduler's). */
  overlap?: 'skip' | 'allow';
  /** The job's catch-up policy (default: the scheduler's). */
  catchUp?: CatchUpSpec;
  /** What the fleet does with a fire whose holder died (default: the scheduler's). */
  onHolderLost?: 'record' | 'rerun';
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
  ledgerPath: string;
  instanceModule: FleetInstanceModule;
  lock: RemoteLockInfo;
  store: RemoteStoreInfo;
}

/** Marker the child writes to stdout when it blocks at its freeze point. */
export const FROZEN_MARKER = 'FROZEN';
