import { hostname } from 'node:os';
import { toError } from '../../errors.js';
import { registeredJob } from '../../fleet/registered-job.js';
import { CORE_VERSION } from '../../fleet/version.js';
import type { ClockOffset } from '../../fleet-clock/offset-estimator.js';
import type { Logger } from '../../logger.js';
import type { FleetStore, InstanceRecord, LiveInstance, RegisteredJob } from '../../registry.js';
import type { Store } from '../../store.js';
import { safeCall, safePublish } from '../fire/index.js';
import type { NormalizedJob } from '../job/index.js';
import type { QueueEntry, TimerQueue } from '../timing/index.js';
import { settleWithin } from '../timing/index.js';

/** Default interval of the registry heartbeat, ms. */
export const DEFAULT_HEARTBEAT_MS = 10_000;

/** What the heartbeat needs from its scheduler. */
export interface HeartbeatDeps {
  readonly store: Store & FleetStore;
  readonly queue: TimerQueue;
  readonly instanceId: string;
  readonly heartbeatMs: number;
  readonly log: Logger;
  /** The fleet's clock, for `startedAt` and event times. */
  now(): number;
  /** The jobs registered now. */
  jobs(): readonly NormalizedJob[];
  clockOffset(): ClockOffset | null;
  /** Told the live instances after each heartbeat that could read them (drift, sweeps). */
  onInstances(instances: LiveInstance[]): void | Promise<void>;
}

/**
 * The scheduler's entry in the fleet registry: writes its {@link InstanceRecord} every
 * `heartbeatMs` (the first at once), then reads the live instances for drift checks and sweeps;
 * `leave()` on stop. Runs on the scheduler's one TimerQueue. A failing or hanging store is
 * reported (`heartbeat.failed`, a warning) and never reaches a fire; each call is bounded by
 * `heartbeatMs`.
 */
export class Heartbeat {
  private timer: QueueEntry | null = null;
  private beating: Promise<void> | null = null;
  private running = false;
  private startedAt = 0;
  /**
   * Each job as its heartbeat publishes it, computed once per registered definition (a
   * definition hash is a SHA-256 of its canonical form: 10,000 jobs would hash 10,000 times a
   * beat otherwise). Keyed by the normalized job, which `add()` creates anew.
   */
  private readonly publishedJobs = new WeakMap<NormalizedJob, RegisteredJob>();

  constructor(private readonly deps: HeartbeatDeps) {}

  /** Starts beating (the first heartbeat now). A no-op when running. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAt = this.deps.now();
    this.next(0);
  }

  /** Stops beating, waits for a heartbeat in flight, and leaves the registry. Never rejects. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.timer) this.deps.queue.cancel(this.timer);
    this.timer = null;
    await this.beating;
    const { store, instanceId } = this.deps;
    await this.bounded('leave', () => store.leave(instanceId));
  }

  /** The record this instance writes now. */
  record(): InstanceRecord {
    const { instanceId, heartbeatMs } = this.deps;
    const offset = this.deps.clockOffset();
    return {
      ...{ instanceId, host: hostname(), pid: process.pid, version: CORE_VERSION },
      startedAt: this.startedAt,
      heartbeatMs,
      // the registry's offset is instance − backend; the estimator's is backend − instance
      clock: offset ? { offsetMs: -offset.offsetMs, rttMs: offset.rttMs } : null,
      jobs: this.deps.jobs().map((job) => this.published(job)),
    };
  }

  private published(job: NormalizedJob): RegisteredJob {
    let published = this.publishedJobs.get(job);
    if (published === undefined) {
      // registered now: its first heartbeat since `add()` (orders definitions in a deploy)
      published = { ...registeredJob(job), registeredAt: this.deps.now() };
      this.publishedJobs.set(job, published);
    }
    return published;
  }

  private next(ms: number): void {
    if (!this.running) return;
    this.timer = this.deps.queue.after(ms, () => {
      this.timer = null;
      this.beating = this.beat().finally(() => {
        this.beating = null;
        this.next(this.deps.heartbeatMs);
      });
    });
  }

  private async beat(): Promise<void> {
    const { store } = this.deps;
    const record = this.record();
    if (!(await this.bounded('heartbeat', () => store.heartbeat(record)))) return;
    let instances: LiveInstance[] | null = null;
    await this.bounded('instances', async () => {
      instances = await store.instances();
    });
    if (instances && this.running) {
      const live: LiveInstance[] = instances;
      await this.bounded('sweep', () => this.deps.onInstances(live));
    }
  }

  /** Runs one registry call within `heartbeatMs`; a failure is reported. True when it worked. */
  private async bounded(what: string, call: () => unknown): Promise<boolean> {
    const { heartbeatMs, queue, log, instanceId } = this.deps;
    const noAnswer = () => new Error(`${what}: no answer within ${heartbeatMs} ms`);
    try {
      await settleWithin(safeCall(call), heartbeatMs, noAnswer, queue);
      return true;
    } catch (thrown) {
      const error = toError(thrown);
      safePublish({ type: 'heartbeat.failed', instanceId, at: this.deps.now(), error });
      log.warn(`fleetcron: fleet registry ${what} failed; fires are not affected`, { error });
      return false;
    }
  }
}
