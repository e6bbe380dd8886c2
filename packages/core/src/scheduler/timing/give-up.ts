/**
 * The part of an `AbortSignal` the scheduler's own claim path reads: whether it aborted, and
 * `abort` listeners. A real `AbortSignal` is one; so is a {@link GiveUp}.
 */
export interface GiveUpSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A one-shot abort flag with listeners, for the scheduler's per-fire "stop waiting" signal:
 * an `AbortController` and its `AbortSignal` (an `EventTarget`) were the costliest objects of a
 * fire, and thousands of fires start on one busy wake. It behaves like an `AbortController`
 * whose signal is itself: `abort()` once, listeners called once in order (a throwing listener
 * does not stop the others), listeners added after the abort never called. A real
 * `AbortSignal` that follows it is made only when something asks for {@link signal} (a lock's
 * single claim carries one).
 */
export class GiveUp implements GiveUpSignal {
  private done = false;
  private why: unknown = undefined;
  private listeners: (() => void)[] | null = null;
  private real: AbortController | null = null;

  /** Whether {@link abort} was called. */
  get aborted(): boolean {
    return this.done;
  }

  /** What {@link abort} was called with (an `AbortError` when nothing), else `undefined`. */
  get reason(): unknown {
    return this.why;
  }

  /** A real `AbortSignal` that aborts with this one (made on first use). */
  get signal(): AbortSignal {
    if (!this.real) {
      this.real = new AbortController();
      if (this.done) this.real.abort(this.why);
    }
    return this.real.signal;
  }

  /** Aborts once: calls every listener, then forgets them. Later calls do nothing. */
  abort(reason?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.why = reason ?? new DOMException('This operation was aborted', 'AbortError');
    this.real?.abort(this.why);
    const listeners = this.listeners;
    this.listeners = null;
    if (!listeners) return;
    for (const listener of listeners) {
      try {
        listener();
      } catch {
        // like an EventTarget: one listener's throw does not stop the others
      }
    }
  }

  /** Calls `listener` once on abort (every listener is once); a no-op once aborted. */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.done) return;
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
  }

  /** Removes `listener` (one registration of it). */
  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (!listeners) return;
    const i = listeners.lastIndexOf(listener);
    // the last one added is the usual one removed: pop() allocates nothing, splice() an array
    if (i === listeners.length - 1) listeners.pop();
    else if (i >= 0) listeners.splice(i, 1);
  }
}
