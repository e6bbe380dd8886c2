/**
 * A `Map` that forgets its oldest entries beyond `capacity`, so state kept between events
 * (a claim's latency until its run starts) stays bounded even when a run never reports back.
 */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Number of entries held. */
  get size(): number {
    return this.#entries.size;
  }

  /** The value of `key`, if still held. */
  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  /** Sets `key` as the newest entry, dropping the oldest ones past the capacity. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
  }

  /** Removes `key`; returns whether it was held. */
  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  /** The entries held, oldest first. */
  entries(): IterableIterator<[K, V]> {
    return this.#entries.entries();
  }

  /** Removes every entry. */
  clear(): void {
    this.#entries.clear();
  }
}

/** Identifies one fire of one job on one instance: the key shared by events and middleware. */
export function fireKey(
  instanceId: string,
  job: string,
  fireAt: number,
  shard?: { index: number } | null,
): string {
  const part = shard ? `\u0000${shard.index}` : '';
  return `${instanceId}\u0000${job}\u0000${fireAt}${part}`;
}
