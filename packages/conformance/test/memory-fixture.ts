import type { Store } from '@fleetcron/core';
import { MemoryElector, MemoryLock, type MemoryLockOptions } from '@fleetcron/core';
import { DEFAULT_WINDOW_MS } from '@fleetcron/core/backend';
import type { LockFixture, StoreFixture } from '../src/index.js';
import { internals } from './mutants/internals.js';

/** A MemoryLock class, the reference or a mutant. */
export type MemoryLockClass = new (options: MemoryLockOptions) => MemoryLock;

/**
 * A conformance fixture over MemoryLock. A fixture is one namespace: every `newLock()` returns
 * the fixture's shared instance (one per window, since MemoryLock fixes its window at
 * construction). The `clock` option is the CLIENT's clock and is deliberately ignored:
 * MemoryLock's own clock plays the backend's clock, which a skewed client cannot change.
 * `newElector()` returns the fixture's one `MemoryElector` (its clock plays the backend's too).
 */
export function memoryLockFixture(Lock: MemoryLockClass = MemoryLock): () => Promise<LockFixture> {
  return async () => {
    const byWindow = new Map<number, MemoryLock>();
    let elector: MemoryElector | undefined;
    return {
      async newLock(options = {}) {
        const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
        let lock = byWindow.get(windowMs);
        if (!lock) {
          lock = new Lock({ windowMs });
          byWindow.set(windowMs, lock);
        }
        return lock;
      },
      async newElector() {
        elector ??= new MemoryElector();
        return elector;
      },
      probe: {
        async claimRecordCount() {
          let count = 0;
          for (const lock of byWindow.values()) {
            for (const state of internals(lock).keys.values()) count += state.fires.size;
          }
          return count;
        },
      },
      async close() {
        byWindow.clear();
      },
    };
  };
}

/**
 * A store conformance fixture over an in-memory store: one namespace is one store instance,
 * which every `newStore()` returns (an in-process store has no connections to separate).
 */
export function memoryStoreFixture(make: () => Store): () => Promise<StoreFixture> {
  return async () => {
    const store = make();
    return {
      async newStore() {
        return store;
      },
      async close() {},
    };
  };
}
