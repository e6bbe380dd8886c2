import type { ClockOffset } from '../fleet-clock/offset-estimator.js';
import type { Logger } from '../middleware.js';
import { type FleetStore, hasFleetControl, type LiveInstance } from '../registry.js';
import type { Store } from '../store.js';
import { DriftWatch } from './drift-watch.js';
import { Heartbeat } from './heartbeat.js';
import type { NormalizedJob } from './job.js';
import type { TimerQueue } from './timer-queue.js';

/** What the scheduler's fleet control needs. */
export interface FleetControlDeps {
  readonly store: Store & FleetStore;
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly heartbeatMs: number;
  readonly log: Logger;
  now(): number;
  jobs(): readonly NormalizedJob[];
  clockOffset(): ClockOffset | null;
  /** Extra work after each heartbeat that read the live instances (sweeps). */
  afterHeartbeat?(instances: LiveInstance[]): Promise<void>;
}

/**
 * The scheduler's part in fleet control, present when its store has fleet control
 * (`hasFleetControl(store)`): the registry heartbeat and the drift watch on it.
 */
export class FleetControl {
  private readonly heartbeat: Heartbeat;
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
  }

  /** Starts heartbeating (the first beat now). */
  start(): void {
    this.heartbeat.start();
  }

  /** Stops heartbeating and leaves the registry. Never rejects. */
  async stop(): Promise<void> {
    await this.heartbeat.stop();
  }

  private async seen(instances: LiveInstance[]): Promise<void> {
    this.drift.check(
      instances,
      this.deps.jobs().map((j) => j.name),
    );
    await this.deps.afterHeartbeat?.(instances);
  }
}
