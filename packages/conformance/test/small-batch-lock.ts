import {
  type BatchOptions,
  type ClaimRequest,
  type ClaimResult,
  type Lease,
  MemoryLock,
  type MemoryLockOptions,
} from '@fleetcron/core';
import { assertBatchSize } from '@fleetcron/core/backend';

/** The batch size {@link SmallBatchLock} declares. */
export const SMALL_BATCH = 7;

/**
 * Not a mutant: MemoryLock declaring a small `maxBatch` (and refusing more, as the contract
 * says), so the claimMany scenarios exercise their splitting into several calls.
 */
export class SmallBatchLock extends MemoryLock {
  constructor(options: MemoryLockOptions) {
    super(options);
    Object.assign(this, { capabilities: { ...this.capabilities, maxBatch: SMALL_BATCH } });
  }

  override async claimMany(
    requests: readonly ClaimRequest[],
    options?: BatchOptions,
  ): Promise<ClaimResult[]> {
    assertBatchSize(requests, SMALL_BATCH);
    return super.claimMany(requests, options);
  }

  override async extendMany(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options?: BatchOptions,
  ): Promise<(Lease | null)[]> {
    assertBatchSize(leases, SMALL_BATCH);
    return super.extendMany(leases, leaseMs, options);
  }

  override async releaseMany(leases: readonly Lease[], options?: BatchOptions): Promise<boolean[]> {
    assertBatchSize(leases, SMALL_BATCH);
    return super.releaseMany(leases, options);
  }
}
