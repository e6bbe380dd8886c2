import type { ClockOffset } from '../../fleet-clock/offset-estimator.js';
import type { Logger } from '../../logger.js';
import {
  type FleetStore,
  hasFleetControl,
  type LiveInstance,
  type RunRequest,
  type TakenRunRequest,
} from '../../registry.js';
import type { Store } from '../../store.js';
import type { RunRequestTakes } from '../fire/index.js';
import type { NormalizedJob } from '../job/index.js';
import type { TimerQueue } from '../timing/index.js';
import { DriftWatch } from './drift-watch.js';
import { Heartbeat } from './heartbeat.js';
import { HOLDER_LOST_CHECKS_PER_HEARTBEAT, sweepRotation } from './holder-lost.js';
import type { LiveInstances } from './live-instances.js';
import { RunRequestListener, runRequestTakes } from './run-requests.js';

/** What the scheduler's fleet control needs. */
export interface FleetControlDeps {
  readonly store: Store & FleetStore;
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly heartbeatMs: number;
  /** Run-request poll interval, ms. */
  readonly pollMs: number;
  /** How long a take holds the run requests it takes, ms (`runRequestLeaseMs`). */
  readonly takeLeaseMs: number;
  readonly log: Logger;
  /** Where the heartbeat's answer goes (read by the fire path for sharded fires). */
  readonly live: LiveInstances;
  now(): number;
  jobs(): readonly NormalizedJob[];
  clockOffset(): ClockOffset | null;
  /**
   * Runs one taken fleet run request as a manual fire; `takes` decides and gives back requests
   * (`null` for a store that removes them when taken).
   */
  runRequest(request: RunRequest | TakenRunRequest, takes: RunRequestTakes | null): void;
  /** The holder-lost sweep of `jobs` against the live `instances`. */
  sweep(jobs: readonly NormalizedJob[], instances: readonly LiveInstance[]): Promise<void>;
}

/**
 * The scheduler's part in fleet control, present when its store has fleet control
 * (`hasFleetControl(store)`): the registry heartbeat, the drift watch on it, and the fleet
 * run-request listener.
 */
export class FleetControl {
  private readonly heartbeat: Heartbeat;
  /** Job name → when its holder-lost check after a fire last ran (fleet clock). */
  private readonly checkedAt = new Map<string, number>();
  /** Checks started by fires since the last heartbeat (see HOLDER_LOST_CHECKS_PER_HEARTBEAT). */
  private checksSinceBeat = 0;
  private readonly nextBatch = sweepRotation();
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
    const takes = runRequestTakes(deps.store, deps);
    this.requests = new RunRequestListener({
      ...deps,
      jobNames: () => deps.jobs().map((j) => j.name),
      run: (request) => deps.runRequest(request, takes),
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

  /**
   * A fire of `job` was claimed here: check the job for fires whose holder died now, against
   * the live instances of the last heartbeat, at most once per `heartbeatMs` per job (so the
   * instance that runs a job notices a lost fire of it without waiting for the sweep's turn),
   * and at most {@link HOLDER_LOST_CHECKS_PER_HEARTBEAT} such checks between two heartbeats.
   */
  firedHere(job: NormalizedJob): void {
    const now = this.deps.now();
    const last = this.checkedAt.get(job.name);
    const live = this.deps.live.current;
    if (live === null || (last !== undefined && now - last < this.deps.heartbeatMs)) return;
    if (this.checksSinceBeat >= HOLDER_LOST_CHECKS_PER_HEARTBEAT) return; // the sweep's turn
    this.checksSinceBeat++;
    this.checkedAt.set(job.name, now);
    void this.deps.sweep([job], live);
  }

  private async seen(instances: LiveInstance[]): Promise<void> {
    this.deps.live.seen(instances);
    this.checksSinceBeat = 0;
    const jobs = this.deps.jobs();
    const names = new Set(jobs.map((j) => j.name));
    this.drift.check(instances, names, this.deps.live.disagreeing);
    for (const name of [...this.checkedAt.keys()]) {
      if (!names.has(name)) this.checkedAt.delete(name);
    }
    await this.deps.sweep(this.nextBatch(jobs), instances);
  }
}
