import { BackendUnavailableError, toError } from '../../errors.js';
import type { Lease, Lock } from '../../lock.js';
import type { Logger } from '../../logger.js';
import { safeCall } from '../fire/index.js';
import type { LeaseCalls } from '../lock-calls/index.js';
import type { TimerSource } from '../timing/index.js';
import { settleWithin } from '../timing/index.js';

/** How a lease is given back: where, within how long, and where failures are logged. */
export interface ReturnContext {
  readonly lock: Lock;
  readonly timers: TimerSource;
  /** Bound on the lock call, ms. */
  readonly boundMs: number;
  readonly log: Logger;
  /** Where releases go (batched with others due together); default `lock.release`. */
  readonly calls?: LeaseCalls;
}

function bounded<T>(ctx: ReturnContext, operation: string, call: () => Promise<T>): Promise<T> {
  return settleWithin(
    safeCall(call),
    ctx.boundMs,
    () =>
      BackendUnavailableError.because(
        ctx.lock.backend,
        operation,
        `no answer in ${ctx.boundMs} ms`,
      ),
    ctx.timers,
  );
}

/**
 * Ends a lease after its run: the fire's claim record stays, so the fire never runs again.
 * Bounded and contained: on failure the lease simply expires. Never rejects.
 */
export async function releaseLease(ctx: ReturnContext, lease: Lease): Promise<void> {
  try {
    await bounded(ctx, 'release', () =>
      ctx.calls ? ctx.calls.release(lease) : ctx.lock.release(lease),
    );
  } catch (error) {
    ctx.log.warn('fleetcron: could not release the lease; it expires by itself', {
      error: toError(error),
      token: lease.token,
    });
  }
}

/**
 * Hands back a won claim that will never run, so another instance can still claim the fire
 * inside its window: `lock.withdraw(lease)` when the lock has it, else `release` (the fire then
 * stays claimed and does not run). Bounded and contained. Never rejects.
 */
export async function handBackClaim(ctx: ReturnContext, lease: Lease): Promise<void> {
  const { lock } = ctx;
  const withdraw = lock.withdraw;
  if (typeof withdraw !== 'function') {
    await releaseLease(ctx, lease);
    return;
  }
  try {
    await bounded(ctx, 'withdraw', () => withdraw.call(lock, lease));
  } catch (error) {
    ctx.log.warn('fleetcron: could not hand back an unrun claim; its lease expires by itself', {
      error: toError(error),
      token: lease.token,
    });
  }
}
