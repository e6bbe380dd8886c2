import { type ClaimRequest, type ClaimResult, MemoryLock } from '@fleetcron/core';
import { internals } from './internals.js';

/**
 * Deliberately broken catch-up marks: the catch-up scenarios must fail against each (and pass on
 * MemoryLock, the reference).
 */

/** (c1) A catch-up claim ignores the mark: any unclaimed fire down to `since` is won. */
export class CatchUpIgnoresMark extends MemoryLock {
  override async claim(request: ClaimRequest): Promise<ClaimResult> {
    const state = internals(this).keys.get(request.key);
    const mark = state?.mark ?? null;
    if (!request.catchUp || !state) return super.claim(request);
    state.mark = null;
    try {
      return await super.claim(request);
    } finally {
      state.mark = Math.max(
        mark ?? Number.NEGATIVE_INFINITY,
        state.mark ?? Number.NEGATIVE_INFINITY,
      );
      if (!Number.isFinite(state.mark)) state.mark = null;
    }
  }
}

/** (c2) The mark follows the LAST recorded fire, so an older fire claimed later moves it back. */
export class MarkMovesBackwards extends MemoryLock {
  override async claim(request: ClaimRequest): Promise<ClaimResult> {
    const result = await super.claim(request);
    const state = internals(this).keys.get(request.key);
    if (state && result.status !== 'lost') state.mark = request.fireAt;
    return result;
  }
}
