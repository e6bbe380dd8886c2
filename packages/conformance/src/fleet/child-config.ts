import type { FleetInstanceModule } from './instance.js';
import type { FreezePoint } from './instrument.js';
import type { RemoteLockInfo } from './remote.js';

/** The configuration of `child-instance.ts`, passed as JSON in `argv[2]`. */
export interface InstanceChildConfig {
  instanceId: string;
  leaseMs: number;
  /** Name of the one job. */
  job: string;
  /** It fires `every(everyMs)`. */
  everyMs: number;
  point: FreezePoint;
  ledgerPath: string;
  instanceModule: FleetInstanceModule;
  lock: RemoteLockInfo;
  storeBackend: string;
}

/** Marker the child writes to stdout when it blocks at its freeze point. */
export const FROZEN_MARKER = 'FROZEN';
