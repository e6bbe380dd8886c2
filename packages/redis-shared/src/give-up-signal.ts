/**
 * What a Redis call watches to know it was given up on: the part of `AbortSignal` the adapters
 * use. An `AbortSignal` is one; {@link GiveUp} is a cheaper one for the hot path.
 */
export interface GiveUpSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A {@link GiveUpSignal} and its trigger in one small object: what `callRedis` makes for every
 * operation (an `AbortController` costs about a microsecond and an `EventTarget`, on the path of
 * every claim). Listeners run once, in the order they were added, when {@link abort} is called.
 */
export class GiveUp implements GiveUpSignal {
  aborted = false;
  private listeners: (() => void)[] | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index !== -1) this.listeners!.splice(index, 1);
  }

  /** Marks the call given up on and runs the listeners (each once). Later calls do nothing. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }
}
