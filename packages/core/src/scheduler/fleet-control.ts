import type { ClockOffset } from '../fleet-clock/offset-estimator.js';
import type { Logger } from '../middleware.js';
import {
  type FleetStore,
  hasFleetControl,
  type LiveInstance,
  type RunRequest,
} from '../registry.js';
import type { Store } from '../store.js';
import { DriftWatch } from './drift-watch.js';
import { Heartbeat } from './heartbeat.js';
import type { NormalizedJob } from './job.js';
import { RunRequestListener } from './run-requests.js';
import type { TimerQueue } from './timer-queue.js';

/** What the scheduler's fleet control needs. */
export interface FleetControlDeps {
  readonly store: Store & FleetStore;
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly heartbeatMs: number;
  /** Run-request poll interval, ms. */
  readonly pollMs: number;
  readonly log: Logger;
  now(): number;
  jobs(): readonly NormalizedJob[];
  clockOffset(): ClockOffset | null;
  /** Runs one taken fleet run request as a manual fire. */
  runRequest(request: RunRequest): void;
  /** Extra work after each heartbeat that read the live instances (sweeps). */
  afterHeartbeat?(instances: LiveInstance[]): Promise<void>;
}

/**
 * The scheduler's part in fleet control, present when its store has fleet control
 * (`hasFleetControl(store)`): the registry heartbeat, the drift watch on it, and the fleet
 * run-request listener.
 */
export class FleetControl {
  private readonly heartbeat: Heartbeat;
  private readonly requests: RunRequestListener;
  readonly drift: DriftWatch;

  /** `null` when `store` has no fleet control (nothing to heartbeat into). */
  static create(store: Store | null, deps: Omit<FleetControlDeps, 'store'>): FleetControl | null {
    return store && hasFleetControl(store) ? new FleetControl({ ...deps, store }) : null;
  }

  private constructor(private readonly deps: FleetControlDeps) {
    this.drift = new DriftWatch(deps.instanceId, deps.log, deps.now);
    this.heartbeat = new Heartbeat({
      ...deps,
      onInstances: (instances) => this.seen(instances),
    });
    this.requests = new RunRequestListener({
      ...deps,
      jobNames: () => deps.jobs().map((j) => j.name),
      run: (request) => deps.runRequest(request),
    });
  }

  /** Starts heartbeating (the first beat now) and listening for run requests. */
  start(): void {
    this.heartbeat.start();
    this.requests.start();
  }

  /** Stops taking run requests (when `stop()` begins). Never rejects. */
  async stopRequests(): Promise<void> {
    await this.requests.stop();
  }

  /**
   * Stops listening and heartbeating, and leaves the registry (after the drain, so a run still
   * draining is never taken for one whose holder is gone). Never rejects.
   */
  async stop(): Promise<void> {
    await Promise.all([this.requests.stop(), this.heartbeat.stop()]);
  }

  private async seen(instances: LiveInstance[]): Promise<void> {
    this.drift.check(
      instances,
      this.deps.jobs().map((j) => j.name),
    );
    await this.deps.afterHeartbeat?.(instances);
  }
}
