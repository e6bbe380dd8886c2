import { type Clock, sleepOn } from '../clock.js';
import type { ClockOffsetEstimator } from './offset-estimator.js';

/**
 * The fleet's clock as seen from one instance: wall time is the backend's clock as `estimator`
 * estimates it (the local wall clock until the first sample); monotonic time and timers are
 * `local`'s. The scheduler reads every wall time through it: fire times, `ctx.clock`,
 * `ctx.startedAt`, event and history timestamps.
 */
export function fleetClock(local: Clock, estimator: ClockOffsetEstimator): Clock {
  const view: Clock = {
    now: () => estimator.now(),
    monotonic: () => local.monotonic(),
    setTimer: (callback, ms) => local.setTimer(callback, ms),
    clearTimer: (handle) => local.clearTimer(handle),
    sleep: (ms, signal) => sleepOn(view, ms, signal),
  };
  return view;
}
