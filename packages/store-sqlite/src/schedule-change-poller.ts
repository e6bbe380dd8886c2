import type { Logger, ScheduleChange } from '@fleetcron/core';
import type { ScheduleChangesResult } from './schedule-operations.js';

/** Changes read by one poll at most; more pending than that is told as one `resync`. */
export const MAX_CHANGES_PER_POLL = 1_000;
/** Longest wait between polls while they fail (doubling from the interval), ms. */
const MAX_FAILING_WAIT_MS = 1_000;

/**
 * `watchSchedules` of the SQLite store: SQLite cannot notify other processes, so one loop per
 * store polls the file's change counter every `intervalMs` while anyone watches (one indexed read
 * of `change_seq` on the store's connection; nothing else when nothing changed) and tells the
 * watchers the ids written since its last read. Watchers hear `resync` when the loop has its
 * first position (a change made between subscribing and that read is not lost), after a poll
 * failed and one succeeds again, and when the counter went back (the file was replaced). While
 * polls fail they are retried at a doubling wait, up to 1 s (or the interval when longer).
 */
export class ScheduleChangePoller {
  private readonly watchers = new Set<(change: ScheduleChange) => void>();
  /** The counter value read last; `null` before the first read and after a failure. */
  private position: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private failing = false;
  /** Wait before the next poll: the interval, longer while polls fail. */
  private waitMs: number;

  constructor(
    private readonly read: (after: number, limit: number) => Promise<ScheduleChangesResult>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {
    this.waitMs = intervalMs;
  }

  /** Adds a watcher (starting the loop for the first); returns its unsubscribe function. */
  watch(listener: (change: ScheduleChange) => void): () => void {
    this.watchers.add(listener);
    if (this.watchers.size === 1) this.schedule(0);
    return () => {
      this.watchers.delete(listener);
      if (this.watchers.size === 0) this.stop();
    };
  }

  /** Stops the loop and forgets every watcher (the store is closing). */
  close(): void {
    this.watchers.clear();
    this.stop();
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.position = null;
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.polling) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.poll();
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.watchers.size === 0) return;
    this.polling = true;
    try {
      const after = this.position ?? Number.MAX_SAFE_INTEGER;
      const { head, changes } = await this.read(after, MAX_CHANGES_PER_POLL);
      if (this.watchers.size === 0) return;
      if (
        this.position === null ||
        head < this.position ||
        changes.length === MAX_CHANGES_PER_POLL
      ) {
        // first read, recovery after a failure, a replaced file, or a flood: read everything
        this.position = head;
        if (this.failing) this.log.info('fleetcron: polling schedule changes works again; resync');
        this.failing = false;
        this.waitMs = this.intervalMs;
        this.tell({ kind: 'resync' });
      } else {
        for (const { id, seq } of changes) {
          this.position = seq;
          this.tell({ kind: 'changed', id });
        }
      }
    } catch (error) {
      if (this.watchers.size === 0) return; // unsubscribed or closed meanwhile: nobody to tell
      this.waitMs = Math.min(this.waitMs * 2, Math.max(MAX_FAILING_WAIT_MS, this.intervalMs));
      if (!this.failing) {
        this.log.warn('fleetcron: polling schedule changes failed; resync when it works again', {
          error,
        });
      }
      this.failing = true;
      this.position = null;
    } finally {
      this.polling = false;
      if (this.watchers.size > 0) this.schedule(this.waitMs);
    }
  }

  private tell(change: ScheduleChange): void {
    for (const watcher of this.watchers) {
      try {
        watcher(change);
      } catch {
        // a throwing watcher is its own problem; the others still hear the change
      }
    }
  }
}
