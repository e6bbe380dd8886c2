import type { Lock } from '@fleetcron/core';

/** Calls a scheduler made on its lock: each call is one round trip (or one batch of them). */
export interface LockCalls {
  /** `lock.claim` calls (one fire each). */
  claim: number;
  /** `lock.claimMany` calls (one batch each). */
  claimMany: number;
  /** Fires sent in all `claimMany` calls together. */
  claimManyRequests: number;
  /** `lock.release` calls. */
  release: number;
  /** `lock.releaseMany` calls. */
  releaseMany: number;
  /** `lock.extend` + `lock.extendMany` calls. */
  extend: number;
}

/** A lock that counts the calls made on it, and the counts. */
export interface CountingLock {
  lock: Lock;
  calls: LockCalls;
  /**
   * Sets every count back to 0 (between cells) and, with `keyPrefix`, counts from then on only
   * the calls about keys that start with it (a batch counts when any of its keys does; its
   * requests count one by one), so other jobs of the scheduler do not blur a cell's figures.
   */
  reset(keyPrefix?: string): void;
}

const zero = (): LockCalls => ({
  claim: 0,
  claimMany: 0,
  claimManyRequests: 0,
  release: 0,
  releaseMany: 0,
  extend: 0,
});

/**
 * Wraps `inner` so that every claim, batch, release and renewal is counted, and otherwise
 * behaves exactly like it: the optional methods (`claimMany`, `extendMany`, `releaseMany`,
 * `withdraw`, `close`) exist on the wrapper only when `inner` has them, and `capabilities` is
 * `inner`'s own object, so the scheduler picks the same path (batched or single claims) on the
 * wrapper as on the lock itself.
 */
export function countingLock(inner: Lock): CountingLock {
  const calls = zero();
  let prefix = '';
  const mine = (key: string) => key.startsWith(prefix);
  const mineIn = (items: readonly { key: string }[]) => items.filter((i) => mine(i.key)).length;
  const lock: Lock = {
    backend: inner.backend,
    get capabilities() {
      return inner.capabilities;
    },
    get windowMs() {
      return inner.windowMs;
    },
    claim(request) {
      if (mine(request.key)) calls.claim++;
      return inner.claim(request);
    },
    extend(lease, leaseMs) {
      if (mine(lease.key)) calls.extend++;
      return inner.extend(lease, leaseMs);
    },
    release(lease) {
      if (mine(lease.key)) calls.release++;
      return inner.release(lease);
    },
    inspect: (key) => inner.inspect(key),
  };
  const { claimMany, extendMany, releaseMany, withdraw, close } = inner;
  if (claimMany) {
    lock.claimMany = (requests, options) => {
      const n = mineIn(requests);
      if (n > 0) calls.claimMany++;
      calls.claimManyRequests += n;
      return claimMany.call(inner, requests, options);
    };
  }
  if (extendMany) {
    lock.extendMany = (leases, leaseMs, options) => {
      if (mineIn(leases) > 0) calls.extend++;
      return extendMany.call(inner, leases, leaseMs, options);
    };
  }
  if (releaseMany) {
    lock.releaseMany = (leases, options) => {
      if (mineIn(leases) > 0) calls.releaseMany++;
      return releaseMany.call(inner, leases, options);
    };
  }
  if (withdraw) lock.withdraw = (lease) => withdraw.call(inner, lease);
  if (close) lock.close = () => close.call(inner);
  const reset = (keyPrefix = '') => {
    Object.assign(calls, zero());
    prefix = keyPrefix;
  };
  return { lock, calls, reset };
}

/** Whether `lock` can claim a batch in one call (it has `claimMany` and declares `maxBatch`). */
export const canBatch = (lock: Lock): boolean =>
  typeof lock.claimMany === 'function' && (lock.capabilities.maxBatch ?? 0) > 1;
