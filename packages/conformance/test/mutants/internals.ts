import type { ClaimedFire, Lease, MemoryLock } from '@fleetcron/core';

/** MemoryLock's private state, reached into by the mutants and the memory probe (tests only). */
export interface MemoryLockInternals {
  keys: Map<
    string,
    {
      fires: Map<number, ClaimedFire>;
      leases: Map<string, Lease>;
      lastToken: number;
      mark: number | null;
    }
  >;
  collect(state: unknown, now: number): void;
}

/** The private state of a MemoryLock. TypeScript `private` is compile-time only. */
export function internals(lock: MemoryLock): MemoryLockInternals {
  return lock as unknown as MemoryLockInternals;
}
