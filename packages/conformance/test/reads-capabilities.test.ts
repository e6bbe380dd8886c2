import {
  type BatchOptions,
  type ClaimRequest,
  type Lease,
  LeaseTooShortError,
  type LockCapabilities,
  MemoryLock,
  type MemoryLockOptions,
} from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { type LockConformanceOptions, lockScenarios, readLockCapabilities } from '../src/index.js';
import { type MemoryLockClass, memoryLockFixture } from './memory-fixture.js';

// The suite takes no `capabilities` option: it reads `lock.capabilities`. A MemoryLock that
// declares (and enforces) a longer minimum lease and a coarser granularity must change what the
// suite asks of it; every lease length the suite sends is recorded here.

/** A MemoryLock declaring `declared` over its own capabilities, recording every leaseMs asked. */
function recordingLock(declared: Partial<LockCapabilities>, asked: number[]): MemoryLockClass {
  return class RecordingLock extends MemoryLock {
    override readonly capabilities: LockCapabilities;
    constructor(options: MemoryLockOptions) {
      super(options);
      this.capabilities = { ...new MemoryLock(options).capabilities, ...declared };
    }
    private ask(leaseMs: number): void {
      asked.push(leaseMs);
      const { minLeaseMs, leaseGranularityMs } = this.capabilities;
      if (leaseMs < minLeaseMs) throw new LeaseTooShortError('leaseMs', leaseMs, minLeaseMs, 'x');
      if (leaseMs % leaseGranularityMs !== 0) {
        throw new Error(`leaseMs ${leaseMs} is not a multiple of ${leaseGranularityMs}`);
      }
    }
    override claim(request: ClaimRequest) {
      this.ask(request.leaseMs);
      return super.claim(request);
    }
    override claimMany(requests: readonly ClaimRequest[], options?: BatchOptions) {
      for (const request of requests) this.ask(request.leaseMs);
      return super.claimMany(requests, options);
    }
    override extend(lease: Lease, leaseMs: number) {
      this.ask(leaseMs);
      return super.extend(lease, leaseMs);
    }
    override extendMany(leases: readonly Lease[], leaseMs: readonly number[], o?: BatchOptions) {
      for (const ms of leaseMs) this.ask(ms);
      return super.extendMany(leases, leaseMs, o);
    }
  };
}

const options = (Lock: MemoryLockClass): LockConformanceOptions => ({
  name: 'recording',
  create: memoryLockFixture(Lock),
  inProcess: true,
});

const LONG = { minLeaseMs: 3000, leaseGranularityMs: 1000 };

describe('the lock suite reads capabilities from the lock it is given', () => {
  it('reads lock.capabilities from a lock of create()', async () => {
    const declared = await readLockCapabilities(options(recordingLock(LONG, [])));
    expect(declared).toMatchObject(LONG);
    expect(await readLockCapabilities(options(MemoryLock))).toEqual(new MemoryLock().capabilities);
  });

  it('a lock declaring a longer minimum lease is asked for longer leases', async () => {
    const reference: number[] = [];
    const long: number[] = [];
    for (const name of ['leaseExpiryHandsOver', 'extendOwnerOnly'] as const) {
      await lockScenarios[name].run(options(recordingLock({}, reference)));
      await lockScenarios[name].run(options(recordingLock(LONG, long)));
    }
    // The reference lock (minimum 1 ms) is asked for the suite's own short leases ...
    expect(reference).toContain(1500);
    expect(Math.min(...reference)).toBeLessThan(LONG.minLeaseMs);
    // ... the long one never below its minimum, always whole seconds, and at the minimum itself.
    expect(long.length).toBeGreaterThan(0);
    expect(Math.min(...long)).toBe(LONG.minLeaseMs);
    expect(long.every((ms) => ms % LONG.leaseGranularityMs === 0)).toBe(true);
  }, 60_000);

  it('a coarser granularity alone rounds every lease the suite sends', async () => {
    const asked: number[] = [];
    await lockScenarios.extendOwnerOnly.run(
      options(recordingLock({ leaseGranularityMs: 3000 }, asked)),
    );
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((ms) => ms % 3000 === 0)).toBe(true);
  }, 60_000);

  it('a malformed declaration fails every scenario, naming the field', async () => {
    const broken = options(recordingLock({ minLeaseMs: 0 }, []));
    await expect(lockScenarios.oneWinnerPerFire.run(broken)).rejects.toThrow(
      /lock\.capabilities\.minLeaseMs must be a positive integer/,
    );
  });

  it('locks of one fixture that declare different capabilities fail the first scenario', async () => {
    let made = 0;
    const create = memoryLockFixture(
      class Inconsistent extends MemoryLock {
        override readonly capabilities = {
          ...new MemoryLock().capabilities,
          minLeaseMs: ++made === 1 ? 1 : 2000,
        };
      },
    );
    await expect(
      lockScenarios.freshIsolatedFixtures.run({ name: 'inconsistent', create, inProcess: true }),
    ).rejects.toThrow(/every lock of every fixture declares the same capabilities/);
  });
});
