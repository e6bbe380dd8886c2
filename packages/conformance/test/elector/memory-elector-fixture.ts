import { type Elector, MemoryElector } from '@fleetcron/core';
import type { ElectorFixture } from '../../src/index.js';

/**
 * A conformance fixture over an elector class (the reference `MemoryElector` or a mutant): one
 * shared instance per fixture (one namespace). The `clock` option is the CANDIDATE's clock and
 * is ignored on purpose: the elector's own (real) clock plays the backend's clock.
 */
export function memoryElectorFixture(
  make: () => Elector = () => new MemoryElector(),
): () => Promise<ElectorFixture> {
  return async () => {
    const elector = make();
    return {
      newElector: async () => elector,
      close: async () => {},
    };
  };
}
