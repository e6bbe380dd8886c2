import diagnosticsChannel from 'node:diagnostics_channel';
import type { Clock } from '../../clock.js';
import { EVENTS_CHANNEL, type FleetcronEvent } from '../../events.js';
import type { LostReason } from '../../lock.js';
import type { ShardInfo } from '../../shards/shard-info.js';
import type { RunStatus } from '../../store.js';
import { safePublish } from './safe.js';

/** Why a fire was not run (the `reason` of `fire.skipped` and of the `skipped` execution). */
export type SkipReason =
  /** The previous run still holds the job's lease (`overlap: 'skip'`). */
  | 'overlap'
  /** The job is paused fleet-wide. */
  | 'paused'
  /** The lock threw, or gave no answer in time: fail closed. */
  | 'backend_unavailable'
  /** The claim was won while `stop()` was aborting; the claim was handed back. */
  | 'stopping'
  /** The lease's local deadline passed before the job could start; the claim was handed back. */
  | 'lease_expired'
  /** Missed while the whole fleet was down, and the job's `catchUp` is `'skip'`. */
  | 'missed';

/** The channel `publish()` uses: read to skip building events nobody listens to. */
const channel = diagnosticsChannel.channel(EVENTS_CHANNEL);

/**
 * Publishes the lifecycle events of one fire (see `FleetcronEvent`). Every method stamps the
 * instance, job, fire time and the clock's current time; a throwing subscriber never reaches the
 * caller. Nothing is built while nobody subscribes; events are plain literals (a spread per
 * event cost ~40x more in V8, thousands of events per busy wake).
 */
export class FireEvents {
  constructor(
    private readonly instanceId: string,
    private readonly job: string,
    private readonly fireAt: number,
    private readonly clock: Clock,
    /** The part of a sharded fire, stamped on every event (absent for a plain fire). */
    private readonly shard?: ShardInfo,
  ) {}

  scheduled(): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({ instanceId, job, fireAt, at: this.clock.now(), type: 'fire.scheduled' });
  }

  missed(lateMs: number): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({ instanceId, job, fireAt, at: this.clock.now(), type: 'fire.missed', lateMs });
  }

  claimWon(backend: string, token: number, latencyMs: number): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({
      instanceId,
      job,
      fireAt,
      at: this.clock.now(),
      type: 'claim.won',
      backend,
      token,
      latencyMs,
    });
  }

  claimLost(backend: string, reason: LostReason, latencyMs: number): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({
      instanceId,
      job,
      fireAt,
      at: this.clock.now(),
      type: 'claim.lost',
      backend,
      reason,
      latencyMs,
    });
  }

  claimBusy(backend: string, latencyMs: number): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({
      instanceId,
      job,
      fireAt,
      at: this.clock.now(),
      type: 'claim.busy',
      backend,
      latencyMs,
    });
  }

  claimFailed(backend: string, error: Error, latencyMs: number): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({
      instanceId,
      job,
      fireAt,
      at: this.clock.now(),
      type: 'claim.failed',
      backend,
      error,
      latencyMs,
    });
  }

  skipped(reason: SkipReason): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({ instanceId, job, fireAt, at: this.clock.now(), type: 'fire.skipped', reason });
  }

  runStarted(token: number, startedAt: number): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({
      instanceId,
      job,
      fireAt,
      at: this.clock.now(),
      type: 'run.started',
      token,
      lagMs: startedAt - fireAt,
    });
  }

  runFinished(run: {
    token: number;
    status: RunStatus;
    attempt: number;
    durationMs: number;
    error: Error | null;
  }): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({
      instanceId,
      job,
      fireAt,
      at: this.clock.now(),
      type: 'run.finished',
      token: run.token,
      status: run.status,
      attempt: run.attempt,
      durationMs: run.durationMs,
      error: run.error,
    });
  }

  leaseRenewed(token: number, expiresAt: number): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({
      instanceId,
      job,
      fireAt,
      at: this.clock.now(),
      type: 'lease.renewed',
      token,
      expiresAt,
    });
  }

  leaseLost(token: number, error: Error | null): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({ instanceId, job, fireAt, at: this.clock.now(), type: 'lease.lost', token, error });
  }

  triggerFailed(error: Error): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({ instanceId, job, fireAt, at: this.clock.now(), type: 'trigger.failed', error });
  }

  storeFailed(error: Error): void {
    if (!channel.hasSubscribers) return;
    const { instanceId, job, fireAt } = this;
    this.send({ instanceId, job, fireAt, at: this.clock.now(), type: 'store.failed', error });
  }

  /** Adds this fire's part (a sharded fire) and publishes. */
  private send(event: FleetcronEvent): void {
    if (this.shard) (event as { shard?: ShardInfo }).shard = this.shard;
    safePublish(event);
  }
}
