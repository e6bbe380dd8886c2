import {
  type BatchOptions,
  type ClaimRequest,
  type ClaimResult,
  type Lease,
  MemoryLock,
} from '@fleetcron/core';
import { internals } from './internals.js';

/**
 * Deliberately broken batched claims: each `claimMany` (or `extendMany` / `releaseMany`) differs
 * from the single calls in one way; the claimMany scenarios must fail against each (and pass on
 * MemoryLock, the reference).
 */

const fireId = (r: { key: string; fireAt: number }) => `${r.key}\u0000${r.fireAt}`;

/** (b1) A fire won earlier in the same batch is answered `won` again for another owner. */
export class WinsFireTakenInBatch extends MemoryLock {
  override async claimMany(
    requests: readonly ClaimRequest[],
    options?: BatchOptions,
  ): Promise<ClaimResult[]> {
    const answers = await super.claimMany(requests, options);
    const wonBefore = new Map<string, Lease>();
    return answers.map((answer, i) => {
      const request = requests[i]!;
      const earlier = wonBefore.get(fireId(request));
      if (answer.status === 'won') {
        if (!earlier) wonBefore.set(fireId(request), answer.lease);
        return answer;
      }
      if (!earlier || earlier.owner === request.owner) return answer;
      return { status: 'won', lease: { ...earlier, owner: request.owner } };
    });
  }
}

/** (b2) Applies the batch in reverse order (answers still in request order). */
export class AppliesBatchReversed extends MemoryLock {
  override async claimMany(
    requests: readonly ClaimRequest[],
    options?: BatchOptions,
  ): Promise<ClaimResult[]> {
    const answers = await super.claimMany([...requests].reverse(), options);
    return answers.reverse();
  }
}

/**
 * (b3) Not atomic: decides which fires are new, yields (another batch runs meanwhile), then
 * takes those fires over whoever claimed them in between.
 */
export class ChecksThenTakes extends MemoryLock {
  override async claimMany(
    requests: readonly ClaimRequest[],
    options?: BatchOptions,
  ): Promise<ClaimResult[]> {
    const keys = internals(this).keys;
    const wasNew = requests.map((r) => !keys.get(r.key)?.fires.has(r.fireAt));
    await new Promise<void>((resolve) => setImmediate(resolve));
    requests.forEach((r, i) => {
      if (wasNew[i]) keys.get(r.key)?.fires.delete(r.fireAt);
    });
    return super.claimMany(requests, options);
  }
}

/** (b4) A re-sent won fire gets a fresh lease (a new token) instead of the same one. */
export class ResendGetsNewToken extends MemoryLock {
  override async claimMany(
    requests: readonly ClaimRequest[],
    options?: BatchOptions,
  ): Promise<ClaimResult[]> {
    const keys = internals(this).keys;
    for (const r of requests) {
      const record = keys.get(r.key)?.fires.get(r.fireAt);
      if (record?.owner === r.owner && record.outcome === 'won') {
        keys.get(r.key)!.fires.delete(r.fireAt);
      }
    }
    return super.claimMany(requests, options);
  }
}

/** (b5) Ignores an aborted `BatchOptions.signal` and applies the batch anyway. */
export class IgnoresAbortedBatch extends MemoryLock {
  override async claimMany(requests: readonly ClaimRequest[]): Promise<ClaimResult[]> {
    return super.claimMany(requests);
  }
}

/** (b6) `extendMany` renews every lease with the first lease's `leaseMs`. */
export class ExtendsWithFirstLeaseMs extends MemoryLock {
  override async extendMany(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options?: BatchOptions,
  ): Promise<(Lease | null)[]> {
    return super.extendMany(
      leases,
      leases.map(() => leaseMs[0]!),
      options,
    );
  }
}

/** (b7) `releaseMany` answers `true` for every lease, held or not. */
export class ReleaseManyAlwaysTrue extends MemoryLock {
  override async releaseMany(leases: readonly Lease[], options?: BatchOptions): Promise<boolean[]> {
    await super.releaseMany(leases, options);
    return leases.map(() => true);
  }
}
