import type { Clock, TimerHandle } from '../../clock.js';

/**
 * Where a bounded wait (`settleWithin`) sets its timer: any {@link Clock} (adapters pass
 * `realClock`), or the scheduler's single timer queue.
 */
export interface TimerSource {
  setTimer(callback: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}
