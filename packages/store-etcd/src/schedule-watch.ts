import type { ScheduleChange } from '@fleetcron/core';
import type { Etcd3, IKeyValue, Watcher } from 'etcd3';

/** Wait before watching again after etcd cancelled the watch, ms. */
const REWATCH_MS = 1_000;

/**
 * Push of schedule changes for `EtcdStore.watchSchedules`: ONE etcd watch on the schedules'
 * key prefix while anyone listens. Each put (a write's own revision: the event cannot be
 * separated from the write) is heard as `changed` with the id from the key. Every time the watch
 * takes effect, the first time and after each reconnect, listeners hear `resync`: etcd3 resumes a
 * dropped watch from the last revision it saw, and the resync covers what that cannot (a
 * revision compacted while the watch was away, a drop right after the resume). A watch etcd
 * cancels (compaction, a server-side cancel) is made anew from the current revision a second
 * later, and its first `connected` resyncs too. Its `'error'` events are always handled.
 */
export class ScheduleWatch {
  private readonly listeners = new Set<(change: ScheduleChange) => void>();
  private watcher: Watcher | null = null;
  private rewatch: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  /**
   * @param client The store's client.
   * @param prefix The schedules' key prefix (`StoreKeys.allSchedules()`).
   */
  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
  ) {}

  /**
   * Adds `listener`; the first one starts the watch. Returns the unsubscribe function. After
   * {@link close} (the store's client is closed) it adds nothing: readers poll.
   */
  subscribe(listener: (change: ScheduleChange) => void): () => void {
    if (this.closed) return () => {};
    this.listeners.add(listener);
    if (this.watcher === null && this.rewatch === null) this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Drops every listener and cancels the watch. */
  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.stop();
  }

  private start(): void {
    const watcher = this.client.watch().prefix(this.prefix).watcher();
    this.watcher = watcher;
    const mine = () => this.watcher === watcher;
    watcher.on('connected', () => {
      if (mine()) this.emit({ kind: 'resync' });
    });
    const changed = (kv: IKeyValue) => {
      if (mine()) this.emit({ kind: 'changed', id: kv.key.toString().slice(this.prefix.length) });
    };
    watcher.on('put', changed);
    watcher.on('delete', changed); // only an operator deletes a schedule key: it reads as none
    watcher.on('disconnected', () => {
      // etcd3 re-creates the watch from its last revision; 'connected' then resyncs
    });
    watcher.on('error', () => {
      // etcd cancelled the watch (its revision was compacted, or the server cancelled it) and
      // etcd3 dropped it: watch anew from now; the new watch's 'connected' resyncs.
      if (!mine()) return;
      this.watcher = null;
      this.rewatch = setTimeout(() => {
        this.rewatch = null;
        if (this.listeners.size > 0 && this.watcher === null) this.start();
      }, REWATCH_MS);
      this.rewatch.unref?.();
    });
  }

  private stop(): void {
    if (this.rewatch !== null) clearTimeout(this.rewatch);
    this.rewatch = null;
    const watcher = this.watcher;
    this.watcher = null;
    void watcher?.cancel().catch(() => undefined);
  }

  private emit(change: ScheduleChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // a listener's failure is its own; the others still hear the change
      }
    }
  }
}
