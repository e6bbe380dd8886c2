// An adapter written outside the fleetcron repository, as a contributor would write one: it
// implements `Lock` from the published @fleetcron/core. Its "backend" is a MemoryLock that every
// client of one namespace shares, so the test is about packaging, not about a new backend.
import type {
  BatchOptions,
  ClaimRequest,
  ClaimResult,
  Lease,
  Lock,
  LockCapabilities,
  LockInspection,
  MarkReading,
  MemoryLock,
} from '@fleetcron/core';
import { assertNonEmptyString } from '@fleetcron/core/backend';

/** A client of a shared in-process backend (`MemoryLock`): one `ExampleLock` per "connection". */
export class ExampleLock implements Lock {
  readonly backend: string;
  readonly capabilities: LockCapabilities;
  readonly windowMs: number;
  readonly #backend: MemoryLock;

  constructor(backend: MemoryLock, options: { name?: string } = {}) {
    this.backend = options.name ?? 'example';
    assertNonEmptyString('name', this.backend);
    this.#backend = backend;
    this.capabilities = backend.capabilities;
    this.windowMs = backend.windowMs;
  }

  claim(request: ClaimRequest): Promise<ClaimResult> {
    return this.#backend.claim(request);
  }

  claimMany(requests: readonly ClaimRequest[], options?: BatchOptions): Promise<ClaimResult[]> {
    return this.#backend.claimMany(requests, options);
  }

  extend(lease: Lease, leaseMs: number): Promise<Lease | null> {
    return this.#backend.extend(lease, leaseMs);
  }

  extendMany(
    leases: readonly Lease[],
    leaseMs: readonly number[],
    options?: BatchOptions,
  ): Promise<(Lease | null)[]> {
    return this.#backend.extendMany(leases, leaseMs, options);
  }

  release(lease: Lease): Promise<boolean> {
    return this.#backend.release(lease);
  }

  releaseMany(leases: readonly Lease[], options?: BatchOptions): Promise<boolean[]> {
    return this.#backend.releaseMany(leases, options);
  }

  withdraw(lease: Lease): Promise<boolean> {
    return this.#backend.withdraw(lease);
  }

  inspect(key: string): Promise<LockInspection> {
    return this.#backend.inspect(key);
  }

  readMarks(keys: readonly string[], options?: BatchOptions): Promise<MarkReading> {
    return this.#backend.readMarks(keys, options);
  }
}
