/* The scheduler's lifecycle: its state as users see it, how `stop()` is asked, and the one object
 * every part under the scheduler reads to know whether to go on. */

/** Options of `Scheduler.stop()`. */
export interface StopOptions {
  /** How long to wait for running jobs before aborting them, ms. Default: the scheduler's `drainMs`. */
  drainMs?: number;
}

/** Lifecycle state of a `Scheduler`. */
export type SchedulerState = 'idle' | 'running' | 'stopping';

/**
 * Where the scheduler is in its life, as the parts under it read it: one object, built by the
 * scheduler and read-only to them, instead of a callback per question. The predicates are plain
 * function properties (passed on unbound, shared by every fire: no closure per fire).
 */
export interface LifecycleView {
  /** Aborted when `stop()` begins (fires waiting to claim again are dropped); new at `start()`. */
  readonly stopSignal: AbortSignal;
  /** Claims are taken: started, and `stop()` has not begun. */
  readonly takesClaims: () => boolean;
  /** Won fires are run: started, or `stop()` is draining (before it aborts the runs). */
  readonly runsFires: () => boolean;
  /** Regular fires are scheduled: claims are taken and the fleet's clock was learned at `start()`. */
  readonly schedulesFires: () => boolean;
}

/** `stop()`'s two halves: `draining` lets running jobs finish, `aborting` has aborted them. */
type Phase = 'idle' | 'running' | 'draining' | 'aborting';

/**
 * The scheduler's lifecycle: `idle` → `start()` → `running` → `stop()` → `draining` →
 * (drain deadline) `aborting` → `idle`. Only the scheduler moves it; everything else reads it
 * through {@link LifecycleView}.
 */
export class Lifecycle implements LifecycleView {
  private phase: Phase = 'idle';
  private clockLearned = false;
  private controller = new AbortController();

  get stopSignal(): AbortSignal {
    return this.controller.signal;
  }

  readonly takesClaims = (): boolean => this.phase === 'running';
  readonly runsFires = (): boolean => this.phase === 'running' || this.phase === 'draining';
  readonly schedulesFires = (): boolean => this.phase === 'running' && this.clockLearned;

  /** `idle`, `running`, or `stopping` (inside `stop()`). */
  get state(): SchedulerState {
    if (this.phase === 'running') return 'running';
    return this.phase === 'idle' ? 'idle' : 'stopping';
  }

  /** `start()`: running, the fleet's clock not learned yet; returns this run's stop signal. */
  start(): AbortSignal {
    this.phase = 'running';
    this.clockLearned = false;
    this.controller = new AbortController();
    return this.controller.signal;
  }

  /**
   * The fleet's clock was learned for the run whose stop signal is `run`; false (nothing
   * changes) when that run was stopped meanwhile.
   */
  learnedClock(run: AbortSignal): boolean {
    if (this.phase !== 'running' || this.controller.signal !== run) return false;
    this.clockLearned = true;
    return true;
  }

  /** `stop()` begins: claims stop, the stop signal aborts, running jobs may finish. */
  drain(): void {
    this.phase = 'draining';
    this.controller.abort();
  }

  /** `stop()` passed its drain deadline: running jobs are aborted, no won fire runs any more. */
  abortRuns(): void {
    this.phase = 'aborting';
  }

  /** `stop()` is done. */
  stopped(): void {
    this.phase = 'idle';
  }
}
