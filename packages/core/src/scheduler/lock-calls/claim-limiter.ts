/**
 * Bounds how many claims one scheduler has in flight. When a thousand jobs fall due in the same
 * second, sending every claim at once only queues them inside the client (a pool of ten
 * connections, one etcd channel) where they run into the adapter's timeout and are skipped;
 * queueing them here instead means each claim's timeout starts when it is actually sent.
 */
export class ClaimLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  /** @param limit most claims in flight at once (a positive integer). */
  constructor(private readonly limit: number) {}

  /** Resolves when a slot is free; call the returned function exactly once to give it back. */
  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }

  /** Claims waiting for a slot (for tests and metrics). */
  get queued(): number {
    return this.waiting.length;
  }
}
