import type { LockCapabilities } from '@fleetcron/core';
import { onceWithOptions } from '../capabilities.js';
import type {
  LockConformanceOptions,
  LockFaultScenario,
  LockScenario,
  LockScenarioOptions,
  RunnableLockFaultScenario,
  RunnableLockScenario,
} from '../types.js';

/**
 * Reads `lock.capabilities` from a lock of a fresh fixture of `options.create()` (once per
 * options object; later calls share the answer) and checks that they are well formed. The
 * suite's single source of what a backend can do: adapters do not pass capabilities.
 */
export const readLockCapabilities = onceWithOptions(
  async (options: LockConformanceOptions): Promise<LockCapabilities> => {
    const fixture = await options.create();
    try {
      const capabilities = (await fixture.newLock()).capabilities;
      checkLockCapabilities(options.name, capabilities);
      return { ...capabilities };
    } finally {
      await fixture.close();
    }
  },
);

/** The adapter's options with the capabilities its locks declare (see {@link readLockCapabilities}). */
export async function lockScenarioOptions(
  options: LockConformanceOptions,
): Promise<LockScenarioOptions> {
  return { ...options, capabilities: await readLockCapabilities(options) };
}

/** Turns written scenarios into runnable ones that read the capabilities from the lock first. */
export function readingLockCapabilities<T extends Record<string, LockScenario>>(
  scenarios: T,
): { [K in keyof T]: RunnableLockScenario } {
  const runnable: Record<string, RunnableLockScenario> = {};
  for (const [name, scenario] of Object.entries(scenarios)) {
    runnable[name] = {
      title: scenario.title,
      timeoutMs: scenario.timeoutMs,
      run: async (options) => scenario.run(await lockScenarioOptions(options)),
    };
  }
  return runnable as { [K in keyof T]: RunnableLockScenario };
}

/** {@link readingLockCapabilities} for the fault scenarios. */
export function readingLockCapabilitiesForFaults<T extends Record<string, LockFaultScenario>>(
  scenarios: T,
): { [K in keyof T]: RunnableLockFaultScenario } {
  const runnable: Record<string, RunnableLockFaultScenario> = {};
  for (const [name, scenario] of Object.entries(scenarios)) {
    runnable[name] = {
      title: scenario.title,
      timeoutMs: scenario.timeoutMs,
      run: async (options, faults) => scenario.run(await lockScenarioOptions(options), faults),
    };
  }
  return runnable as { [K in keyof T]: RunnableLockFaultScenario };
}

/**
 * Throws when `capabilities` is not a well-formed declaration, naming the field and what it
 * must be (the suite derives every lease length and restart expectation from it).
 */
export function checkLockCapabilities(name: string, capabilities: LockCapabilities): void {
  const fail = (field: string, must: string, got: unknown): never => {
    throw new Error(
      `${name}: lock.capabilities.${field} must be ${must}, got ${JSON.stringify(got)}. Declare the backend's capabilities on the lock (readonly capabilities: LockCapabilities); the conformance suite reads them from there.`,
    );
  };
  if (typeof capabilities !== 'object' || capabilities === null) {
    fail('', 'an object', capabilities);
  }
  const positive = (field: keyof LockCapabilities) => {
    const value = capabilities[field];
    if (!(Number.isSafeInteger(value) && (value as number) > 0)) {
      fail(field, 'a positive integer (ms)', value);
    }
  };
  positive('minLeaseMs');
  positive('leaseGranularityMs');
  if (typeof capabilities.durable !== 'boolean') fail('durable', 'a boolean', capabilities.durable);
  if (capabilities.clock !== 'backend' && capabilities.clock !== 'client') {
    fail('clock', "'backend' or 'client'", capabilities.clock);
  }
  const { earlyToleranceMs, backendTimeBoundMs, durableMark, maxBatch } = capabilities;
  if (
    earlyToleranceMs !== undefined &&
    !(Number.isFinite(earlyToleranceMs) && earlyToleranceMs >= 0)
  ) {
    fail('earlyToleranceMs', 'absent or a non-negative number (ms)', earlyToleranceMs);
  }
  if (
    backendTimeBoundMs !== undefined &&
    !(Number.isFinite(backendTimeBoundMs) && backendTimeBoundMs >= 0)
  ) {
    fail('backendTimeBoundMs', 'absent or a non-negative number (ms)', backendTimeBoundMs);
  }
  if (durableMark !== undefined && typeof durableMark !== 'boolean') {
    fail('durableMark', 'absent or a boolean', durableMark);
  }
  if (maxBatch !== undefined) positive('maxBatch');
}
