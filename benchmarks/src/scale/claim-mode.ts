import type { Elector, Lock, SchedulerOptions } from '@fleetcron/core';
import type { ClaimMode } from './cell.js';

/**
 * Whether a cell in `mode` can run, and if not why: a batched cell needs a lock with
 * `claimMany` (`lockCanBatch`, see `canBatch`), a leader cell an elector on the backend.
 */
export function modeUnavailable(
  mode: ClaimMode,
  lockCanBatch: boolean,
  hasElector = true,
): string | null {
  if (mode === 'batched' && !lockCanBatch) return 'n/a: the lock has no claimMany';
  if (mode === 'leader' && !hasElector) return 'n/a: no elector for this backend';
  return null;
}

/**
 * The same lock without its batch methods (`claimMany`, `extendMany`, `releaseMany`) and
 * without `capabilities.maxBatch`: the scheduler then takes its path for locks without batches
 * (single claims, at most `maxConcurrentClaims` in flight), exactly as for a lock that never had
 * them. Calls go through `lock` (so a counting wrapper still counts them).
 */
export function withoutBatches(lock: Lock): Lock {
  const view: Lock = {
    backend: lock.backend,
    get capabilities() {
      const { maxBatch: _hidden, ...rest } = lock.capabilities;
      return rest;
    },
    get windowMs() {
      return lock.windowMs;
    },
    claim: (request) => lock.claim(request),
    extend: (lease, leaseMs) => lock.extend(lease, leaseMs),
    release: (lease) => lock.release(lease),
    inspect: (key) => lock.inspect(key),
  };
  if (lock.withdraw) view.withdraw = (lease) => lock.withdraw!(lease);
  if (lock.close) view.close = () => lock.close!();
  return view;
}

/**
 * The lock and scheduler options of `mode`. `batched`: the lock as it is, the scheduler's
 * default batch size. `unbatched`: the lock {@link withoutBatches}, so the scheduler sends
 * single claims bounded by `maxConcurrentClaims` (its path for locks without `claimMany`).
 * (`claimBatchSize: 1` is not used: on a lock with `claimMany` it sends one `claimMany` of 1
 * per fire, every one at once, unbounded by `maxConcurrentClaims`.) `leader`: the lock as it
 * is, `mode: 'leader'` with `elector` and the cell's own election name.
 */
export function modeSetup(
  mode: ClaimMode,
  lock: Lock,
  leader: { elector: Elector | undefined; election: string },
): { lock: Lock; options: Partial<SchedulerOptions> } {
  if (mode === 'unbatched') return { lock: withoutBatches(lock), options: {} };
  if (mode === 'batched') return { lock, options: {} };
  if (!leader.elector) throw new Error('a leader cell needs an elector on the backend');
  return {
    lock,
    options: { mode: 'leader', elector: leader.elector, election: leader.election },
  };
}
