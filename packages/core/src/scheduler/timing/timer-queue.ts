import { type Clock, MAX_TIMER_MS, type TimerHandle } from '../../clock.js';
import { type HeapEntry, heapify, pushEntry, removeEntryAt } from './entry-heap.js';

/**
 * How far the wall clock may drift against monotonic time before every wall-clock entry is
 * re-keyed (an NTP step, a suspend/resume). Smaller drifts (NTP slewing) are absorbed.
 */
export const WALL_JUMP_TOLERANCE_MS = 1_000;

/**
 * Longest the queue sleeps while it holds entries, so a forward jump of the wall clock is
 * noticed within this time even when the next entry is days away.
 */
export const WALL_CHECK_MS = 60_000;

/** One scheduled callback. Opaque to callers; pass it to {@link TimerQueue.cancel}. */
export interface QueueEntry extends TimerHandle, HeapEntry {
  /** For wall-clock entries: the epoch ms at which it is due (checked again on wake). */
  readonly wall: number | null;
  readonly callback: () => void;
}

/**
 * One min-heap of callbacks keyed on MONOTONIC time, behind ONE clock timer, for every job fire
 * and every lease renewal of a scheduler: a process with 10,000 jobs holds a single pending
 * timer.
 *
 * Wall-clock entries ({@link atWall}) are converted to monotonic time when queued. On every wake
 * the queue compares the wall clock with monotonic time: if it moved by more than
 * {@link WALL_JUMP_TOLERANCE_MS} (NTP step, suspend) all wall-clock entries are re-keyed, and a
 * popped entry whose wall time is not yet reached (the clock jumped back) is queued again instead
 * of running early. A wake runs every wall-clock entry whose wall time is reached, even one
 * keyed a fraction of a millisecond later than the entry that set the timer (so the fires of one
 * instant run on one wake, and their claims go out in one batch). Delays beyond `setTimeout`'s
 * limit (2^31 − 1 ms) are clamped and re-armed.
 */
export class TimerQueue {
  private readonly heap: QueueEntry[] = [];
  private handle: TimerHandle | null = null;
  /** Monotonic time the armed timer is due at. */
  private armedAt = Number.POSITIVE_INFINITY;
  /** `now() - monotonic()` when wall entries were last keyed. */
  private offset: number;
  private seq = 0;
  private waking = false;
  private wakeEnd: (() => void) | null = null;

  /**
   * @param clock where time is read and the single timer is set.
   * @param onError receives anything a callback throws (callbacks must not break the queue).
   */
  constructor(
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {
    this.offset = clock.now() - clock.monotonic();
  }

  /** Number of queued entries. */
  get size(): number {
    return this.heap.length;
  }

  /** Whether a clock timer is pending (at most one ever is). */
  get armed(): boolean {
    return this.handle !== null;
  }

  /** Runs `callback` once the wall clock reads at least `wallMs` (epoch ms). */
  atWall(wallMs: number, callback: () => void): QueueEntry {
    const now = this.clock.now();
    const mono = this.clock.monotonic();
    if (this.heap.length === 0) this.offset = now - mono;
    return this.insert(mono + Math.max(0, wallMs - now), wallMs, callback);
  }

  /** Runs `callback` after `ms` milliseconds of monotonic time. */
  after(ms: number, callback: () => void): QueueEntry {
    return this.insert(this.clock.monotonic() + Math.max(0, ms), null, callback);
  }

  /** {@link after} under the `Clock` name, so the queue is a `TimerSource` for `settleWithin`. */
  setTimer(callback: () => void, ms: number): QueueEntry {
    return this.after(ms, callback);
  }

  /** {@link cancel} under the `Clock` name. */
  clearTimer(handle: TimerHandle): void {
    this.cancel(handle as QueueEntry);
  }

  /**
   * Resolves after `ms` milliseconds of monotonic time (through the same single timer).
   * `cancel()` removes the entry; the promise then never settles (nothing is kept alive).
   */
  sleep(ms: number): { promise: Promise<void>; cancel: () => void } {
    let entry: QueueEntry | null = null;
    const promise = new Promise<void>((resolve) => {
      entry = this.after(ms, resolve);
    });
    return {
      promise,
      cancel: () => {
        if (entry) this.cancel(entry);
      },
    };
  }

  /** Removes an entry; a no-op for entries that already ran or were cancelled. */
  cancel(entry: QueueEntry): void {
    const i = entry.index;
    if (i < 0 || this.heap[i] !== entry) return;
    removeEntryAt(this.heap, i);
    if (!this.waking) this.arm();
  }

  /**
   * Re-keys the wall-clock entries at once when the clock's wall time moved against monotonic
   * time by more than `toleranceMs` since they were keyed (the fleet clock's offset estimate
   * changed), so they fall due at their wall time on the corrected clock.
   */
  wallMoved(toleranceMs: number): void {
    const now = this.clock.now();
    const mono = this.clock.monotonic();
    if (Math.abs(now - mono - this.offset) <= toleranceMs) return;
    this.rekey(now, mono);
    if (!this.waking) this.arm();
  }

  /**
   * Calls `hook` at the end of every wake, after the due callbacks ran and the timer was set
   * again (the claim batcher sends the claims those callbacks queued, still in this stretch).
   * A hook that throws goes to `onError`. One hook; a later call replaces it.
   */
  afterEachWake(hook: () => void): void {
    this.wakeEnd = hook;
  }

  /** Drops every entry and clears the timer: afterwards the queue keeps nothing alive. */
  clear(): void {
    for (const entry of this.heap) entry.index = -1;
    this.heap.length = 0;
    this.disarm();
  }

  private insert(due: number, wall: number | null, callback: () => void): QueueEntry {
    const entry: QueueEntry = { due, wall, seq: this.seq++, callback, index: -1 };
    pushEntry(this.heap, entry);
    if (!this.waking) this.arm();
    return entry;
  }

  /** Sets the single timer for the head entry (re-setting it only when the head moved). */
  private arm(): void {
    const head = this.heap[0];
    if (!head) {
      this.disarm();
      return;
    }
    const mono = this.clock.monotonic();
    const target = Math.min(head.due, mono + WALL_CHECK_MS);
    if (this.handle !== null && this.armedAt <= target) {
      return; // the armed timer wakes early enough
    }
    this.disarm();
    const delay = Math.min(Math.max(0, target - mono), MAX_TIMER_MS);
    this.armedAt = mono + delay;
    this.handle = this.clock.setTimer(() => this.wake(), delay);
  }

  private disarm(): void {
    if (this.handle !== null) this.clock.clearTimer(this.handle);
    this.handle = null;
    this.armedAt = Number.POSITIVE_INFINITY;
  }

  private wake(): void {
    this.handle = null;
    this.armedAt = Number.POSITIVE_INFINITY;
    this.waking = true;
    try {
      const now = this.clock.now();
      const mono = this.clock.monotonic();
      if (Math.abs(now - mono - this.offset) > WALL_JUMP_TOLERANCE_MS) this.rekey(now, mono);
      for (;;) {
        const head = this.heap[0];
        // also due: a wall-clock entry whose wall time the clock reached, though keyed a fraction
        // of a ms later (entries of one instant keyed at different times): one wake runs them all
        if (!head || (head.due > mono && (head.wall === null || head.wall > now))) break;
        removeEntryAt(this.heap, 0);
        if (head.wall !== null && head.wall > now) {
          // the wall clock went back since the entry was keyed: not due yet, queue it again
          head.due = mono + (head.wall - now);
          pushEntry(this.heap, head);
          continue;
        }
        try {
          head.callback();
        } catch (error) {
          this.onError(error);
        }
      }
    } finally {
      this.waking = false;
      this.arm();
      this.endWake();
    }
  }

  private endWake(): void {
    try {
      this.wakeEnd?.();
    } catch (error) {
      this.onError(error);
    }
  }

  /** Re-computes the monotonic due time of every wall-clock entry after a wall-clock jump. */
  private rekey(now: number, mono: number): void {
    this.offset = now - mono;
    for (const entry of this.heap) {
      if (entry.wall !== null) entry.due = mono + Math.max(0, entry.wall - now);
    }
    heapify(this.heap);
  }
}
