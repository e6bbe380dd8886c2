import type { BackendName, Connection, Variant } from '../backends/types.js';
import type { RestartStart, RestartStarted, RestartStats } from '../restart/instance.js';
import type { ScaleCell } from '../scale/cell.js';
import type { FleetResult } from '../scale/fleet.js';
import type { SingleScaleResult } from '../scale/single.js';
import type { SliceResult, SliceRun } from './slice.js';

/** Requests the main process sends to a worker process, each answered once. */
export type Request =
  | {
      type: 'prepare';
      backend: BackendName;
      variant: Variant;
      connection: Connection;
      /** Global indices of this worker's instances. */
      instances: number[];
      key: string;
      base: number;
    }
  | { type: 'go'; run: SliceRun }
  | { type: 'close' }
  | {
      type: 'scale-open';
      backend: BackendName;
      connection: Connection;
      /** Global indices of the scale instances this process holds (memory: all of them). */
      instances: number[];
      poolSize: number;
    }
  | { type: 'scale-go'; cell: ScaleCell }
  | { type: 'scale-verify'; cell: ScaleCell; ranBy: [number, number][]; failedJobs: number[] }
  | { type: 'scale'; jobs: number; idleSeconds: number }
  | RestartStart
  | { type: 'restart-stats' }
  | { type: 'restart-stop' };

/** What each request answers. */
export interface Responses {
  prepare: { ready: true };
  go: SliceResult;
  close: { closed: true };
  'scale-open': { ready: true; canBatch: boolean; hasElector: boolean };
  'scale-go': FleetResult;
  'scale-verify': string;
  scale: SingleScaleResult;
  'restart-start': RestartStarted;
  'restart-stats': RestartStats;
  'restart-stop': { stopped: true };
}

/** Envelope of a request on the IPC channel. */
export interface RequestEnvelope {
  id: number;
  request: Request;
}

/** Envelope of an answer on the IPC channel. */
export type ResponseEnvelope =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: string };
