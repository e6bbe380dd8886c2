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

/** What {@link FireEvents} stamps on every event of a fire. */
interface Stamps {
  instanceId: string;
  job: string;
  fireAt: number;
  at: number;
}

/** The events about one fire (those with a fire time). */
type FireEvent = Extract<FleetcronEvent, { fireAt: number }>;

/** An event of one fire as a method builds it: its own fields, without the stamps. */
type Unstamped<E> = E extends unknown ? Omit<E, keyof Stamps> : never;

/** The channel `publish()` uses: read to skip building events nobody listens to. */
const channel = diagnosticsChannel.channel(EVENTS_CHANNEL);

/**
 * Publishes the lifecycle events of one fire (see `FleetcronEvent`). Every method stamps the
 * instance, job, fire time and the clock's current time (in `send`); a throwing subscriber never
 * reaches the caller. Nothing is built while nobody subscribes (each method reads
 * `hasSubscribers` first); events are plain literals stamped by assignment (a spread per event
 * cost ~40x more in V8, thousands of events per busy wake).
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
    if (channel.hasSubscribers) this.send({ type: 'fire.scheduled' });
  }

  excluded(reason: string): void {
    if (channel.hasSubscribers) this.send({ type: 'fire.excluded', reason });
  }

  superseded(inForce: string | null): void {
    if (channel.hasSubscribers) this.send({ type: 'fire.superseded', inForce });
  }

  missed(lateMs: number): void {
    if (channel.hasSubscribers) this.send({ type: 'fire.missed', lateMs });
  }

  claimWon(backend: string, token: number, latencyMs: number): void {
    if (channel.hasSubscribers) this.send({ type: 'claim.won', backend, token, latencyMs });
  }

  claimLost(backend: string, reason: LostReason, latencyMs: number): void {
    if (channel.hasSubscribers) this.send({ type: 'claim.lost', backend, reason, latencyMs });
  }

  claimBusy(backend: string, latencyMs: number): void {
    if (channel.hasSubscribers) this.send({ type: 'claim.busy', backend, latencyMs });
  }

  claimFailed(backend: string, error: Error, latencyMs: number): void {
    if (channel.hasSubscribers) this.send({ type: 'claim.failed', backend, error, latencyMs });
  }

  skipped(reason: SkipReason): void {
    if (channel.hasSubscribers) this.send({ type: 'fire.skipped', reason });
  }

  runStarted(token: number, startedAt: number): void {
    if (!channel.hasSubscribers) return;
    this.send({ type: 'run.started', token, lagMs: startedAt - this.fireAt });
  }

  runFinished(run: {
    token: number;
    status: RunStatus;
    attempt: number;
    durationMs: number;
    error: Error | null;
  }): void {
    if (!channel.hasSubscribers) return;
    const { token, status, attempt, durationMs, error } = run;
    this.send({ type: 'run.finished', token, status, attempt, durationMs, error });
  }

  leaseRenewed(token: number, expiresAt: number): void {
    if (channel.hasSubscribers) this.send({ type: 'lease.renewed', token, expiresAt });
  }

  leaseLost(token: number, error: Error | null): void {
    if (channel.hasSubscribers) this.send({ type: 'lease.lost', token, error });
  }

  triggerFailed(error: Error): void {
    if (channel.hasSubscribers) this.send({ type: 'trigger.failed', error });
  }

  storeFailed(error: Error): void {
    if (channel.hasSubscribers) this.send({ type: 'store.failed', error });
  }

  /**
   * Stamps `event` with the instance, job, fire time, the clock's time and (a sharded fire) the
   * part, and publishes it. Called only when someone subscribes: nothing is built otherwise.
   */
  private send(event: Unstamped<FireEvent>): void {
    const stamped = event as Partial<Stamps> & { shard?: ShardInfo };
    stamped.instanceId = this.instanceId;
    stamped.job = this.job;
    stamped.fireAt = this.fireAt;
    stamped.at = this.clock.now();
    if (this.shard) stamped.shard = this.shard;
    safePublish(event as FireEvent);
  }
}
