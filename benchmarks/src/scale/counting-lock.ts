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
  /** Sets every count back to 0 (between cells). */
  reset(): void;
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
  const lock: Lock = {
    backend: inner.backend,
    get capabilities() {
      return inner.capabilities;
    },
    get windowMs() {
      return inner.windowMs;
    },
    claim(request) {
      calls.claim++;
      return inner.claim(request);
    },
    extend(lease, leaseMs) {
      calls.extend++;
      return inner.extend(lease, leaseMs);
    },
    release(lease) {
      calls.release++;
      return inner.release(lease);
    },
    inspect: (key) => inner.inspect(key),
  };
  const { claimMany, extendMany, releaseMany, withdraw, close } = inner;
  if (claimMany) {
    lock.claimMany = (requests, options) => {
      calls.claimMany++;
      calls.claimManyRequests += requests.length;
      return claimMany.call(inner, requests, options);
    };
  }
  if (extendMany) {
    lock.extendMany = (leases, leaseMs, options) => {
      calls.extend++;
      return extendMany.call(inner, leases, leaseMs, options);
    };
  }
  if (releaseMany) {
    lock.releaseMany = (leases, options) => {
      calls.releaseMany++;
      return releaseMany.call(inner, leases, options);
    };
  }
  if (withdraw) lock.withdraw = (lease) => withdraw.call(inner, lease);
  if (close) lock.close = () => close.call(inner);
  return { lock, calls, reset: () => Object.assign(calls, zero()) };
}

/** Whether `lock` can claim a batch in one call (it has `claimMany` and declares `maxBatch`). */
export const canBatch = (lock: Lock): boolean =>
  typeof lock.claimMany === 'function' && (lock.capabilities.maxBatch ?? 0) > 1;
