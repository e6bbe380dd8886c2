import { MemoryElector, MemoryLock } from '@fleetcron/core';
import type { BackendModule, Claimer, OwnedLock } from './types.js';
import { fleetcronClaimer } from './types.js';

/**
 * The in-process reference: one {@link MemoryLock} per process, shared by every instance in it
 * (so memory cells run all their instances in the main process). Floor: a `Set` insert; peer: a
 * plain `Map` lock. They show the cost of the benchmark harness and of the lock's own logic.
 */
let shared: MemoryLock | undefined;

let sharedElector: MemoryElector | undefined;

/** The process-wide MemoryLock every memory instance shares. */
export function sharedMemoryLock(): MemoryLock {
  shared ??= new MemoryLock();
  return shared;
}

const floorRecords = new Set<string>();
const peerLocks = new Map<string, string>();

export const memoryBackend: BackendModule = {
  name: 'memory',
  floorName: 'Set.add if absent (+ owner-checked delete)',
  peerName: 'Map lock (acquire/release)',
  async start() {
    return {
      name: 'memory',
      connection: { namespace: 'memory' },
      version: `node ${process.version}`,
      strategy: 'in-process',
      async close() {
        floorRecords.clear();
        peerLocks.clear();
      },
    };
  },
  async lock(): Promise<OwnedLock> {
    return {
      lock: sharedMemoryLock(),
      elector: () => {
        sharedElector ??= new MemoryElector();
        return sharedElector;
      },
      close: async () => {},
    };
  },
  async claimer(_connection, variant, owner): Promise<Claimer> {
    if (variant === 'fleetcron') return fleetcronClaimer(await this.lock(_connection), owner);
    const table = variant === 'floor' ? floorRecords : null;
    return {
      async claim(key, fireAt) {
        const id = `${key}\u0000${fireAt}`;
        if (table) {
          if (table.has(id)) return { status: 'lost' };
          table.add(id);
          return {
            status: 'won',
            release: async () => table.delete(id),
          };
        }
        if (peerLocks.has(id)) return { status: 'lost' };
        peerLocks.set(id, owner);
        return {
          status: 'won',
          release: async () => peerLocks.get(id) === owner && peerLocks.delete(id),
        };
      },
      close: async () => {},
    };
  },
};
