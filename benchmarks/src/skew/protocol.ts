import type { ClockOffset } from '@fleetcron/core';
import type { BackendName, Connection } from '../backends/types.js';

/** First message to a skew instance: which backend, and its own index and clock skew. */
export interface SkewPrepare {
  type: 'skew-prepare';
  backend: BackendName;
  connection: Connection;
  index: number;
  /** The libfaketime offset of this process's wall clock, ms (0: not skewed). */
  skewMs: number;
}

/** Second message: run `jobs` jobs due at `fireAt` (real epoch ms). */
export interface SkewGo {
  type: 'skew-go';
  jobs: number;
  fireAt: number;
  prefix: string;
  /** How long after `fireAt` the instance waits for its claims to be answered. */
  deadlineMs: number;
}

/** What one skew instance reports. */
export interface SkewInstanceResult {
  index: number;
  skewMs: number;
  /** Runs on this instance: job index and lateness on the REAL clock (start − fire time), ms. */
  runs: { job: number; latenessMs: number }[];
  /** Answers to this instance's claims of the fire (`early` refusals counted apart). */
  claims: { won: number; lost: number; early: number; busy: number; failed: number };
  /** The instance's estimate of the backend's clock when its claims were answered. */
  estimate: ClockOffset | null;
}
