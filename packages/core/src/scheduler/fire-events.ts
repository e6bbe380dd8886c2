import type { Clock } from '../clock.js';
import type { LostReason } from '../lock.js';
import type { ShardInfo } from '../shards/shard-info.js';
import type { RunStatus } from '../store.js';
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

/**
 * Publishes the lifecycle events of one fire (see `FleetcronEvent`). Every method stamps the
 * instance, job, fire time and the clock's current time; a throwing subscriber never reaches the
 * caller.
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

  private base() {
    return {
      instanceId: this.instanceId,
      job: this.job,
      fireAt: this.fireAt,
      at: this.clock.now(),
      ...(this.shard ? { shard: this.shard } : {}),
    };
  }

  scheduled(): void {
    safePublish({ ...this.base(), type: 'fire.scheduled' });
  }

  missed(lateMs: number): void {
    safePublish({ ...this.base(), type: 'fire.missed', lateMs });
  }

  claimWon(backend: string, token: number, latencyMs: number): void {
    safePublish({ ...this.base(), type: 'claim.won', backend, token, latencyMs });
  }

  claimLost(backend: string, reason: LostReason, latencyMs: number): void {
    safePublish({ ...this.base(), type: 'claim.lost', backend, reason, latencyMs });
  }

  claimBusy(backend: string, latencyMs: number): void {
    safePublish({ ...this.base(), type: 'claim.busy', backend, latencyMs });
  }

  claimFailed(backend: string, error: Error, latencyMs: number): void {
    safePublish({ ...this.base(), type: 'claim.failed', backend, error, latencyMs });
  }

  skipped(reason: SkipReason): void {
    safePublish({ ...this.base(), type: 'fire.skipped', reason });
  }

  runStarted(token: number, startedAt: number): void {
    safePublish({ ...this.base(), type: 'run.started', token, lagMs: startedAt - this.fireAt });
  }

  runFinished(run: {
    token: number;
    status: RunStatus;
    attempt: number;
    durationMs: number;
    error: Error | null;
  }): void {
    safePublish({ ...this.base(), type: 'run.finished', ...run });
  }

  leaseRenewed(token: number, expiresAt: number): void {
    safePublish({ ...this.base(), type: 'lease.renewed', token, expiresAt });
  }

  leaseLost(token: number, error: Error | null): void {
    safePublish({ ...this.base(), type: 'lease.lost', token, error });
  }

  triggerFailed(error: Error): void {
    safePublish({ ...this.base(), type: 'trigger.failed', error });
  }

  storeFailed(error: Error): void {
    safePublish({ ...this.base(), type: 'store.failed', error });
  }
}
