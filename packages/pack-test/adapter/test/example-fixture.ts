import type { LockFixture } from '@fleetcron/conformance';
import { MemoryLock } from '@fleetcron/core';
import { DEFAULT_WINDOW_MS } from '@fleetcron/core/backend';
import { ExampleLock } from '../src/index.js';

/**
 * One namespace per call: a MemoryLock per claim window (MemoryLock fixes its window), shared by
 * every `ExampleLock` that `newLock()` makes on it. The `clock` option is the client's clock and is
 * ignored: MemoryLock's clock plays the backend's.
 */
export function exampleLockFixtures(): () => Promise<LockFixture> {
  return async () => {
    const backends = new Map<number, MemoryLock>();
    return {
      async newLock(options = {}) {
        const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
        let backend = backends.get(windowMs);
        if (!backend) {
          backend = new MemoryLock({ windowMs });
          backends.set(windowMs, backend);
        }
        return new ExampleLock(backend);
      },
      async close() {
        backends.clear();
      },
    };
  };
}
