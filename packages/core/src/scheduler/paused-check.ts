import { toError } from '../errors.js';
import type { Store } from '../store.js';
import { settleWithin, type TimerSource } from './deadline.js';
import { safeCall } from './safe.js';

/**
 * Reads the fleet-wide paused flag of `job`. A failing or slow store (no answer within
 * `boundMs`) never blocks the run: it counts as not paused and goes to `onFailed`. Never rejects.
 */
export async function isPaused(
  store: Store | null,
  job: string,
  boundMs: number,
  timers: TimerSource,
  onFailed: (error: Error) => void,
): Promise<boolean> {
  if (!store) return false;
  try {
    const state = await settleWithin(
      safeCall(() => store.getJobState(job)),
      boundMs,
      () => new Error(`store ${store.backend} did not answer getJobState in ${boundMs} ms`),
      timers,
    );
    return state.paused === true;
  } catch (error) {
    onFailed(toError(error));
    return false;
  }
}
