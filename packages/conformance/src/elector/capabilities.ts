import type { ElectorCapabilities } from '@fleetcron/core';
import { onceWithOptions } from '../capabilities.js';
import type {
  ElectorConformanceOptions,
  ElectorFaultScenario,
  ElectorScenario,
  ElectorScenarioOptions,
  RunnableElectorFaultScenario,
  RunnableElectorScenario,
} from './types.js';

/**
 * Reads `elector.capabilities` from an elector of a fresh fixture (once per options object) and
 * checks them. Adapters do not pass capabilities: the elector's declaration is the only source.
 */
export const readElectorCapabilities = onceWithOptions(
  async (options: ElectorConformanceOptions): Promise<ElectorCapabilities> => {
    const fixture = await options.create();
    try {
      const capabilities = (await fixture.newElector()).capabilities;
      checkElectorCapabilities(options.name, capabilities);
      return { ...capabilities };
    } finally {
      await fixture.close();
    }
  },
);

/** The adapter's options with the capabilities its electors declare. */
export async function electorScenarioOptions(
  options: ElectorConformanceOptions,
): Promise<ElectorScenarioOptions> {
  return { ...options, capabilities: await readElectorCapabilities(options) };
}

/** Turns written scenarios into runnable ones that read the capabilities from an elector first. */
export function readingElectorCapabilities<T extends Record<string, ElectorScenario>>(
  scenarios: T,
): { [K in keyof T]: RunnableElectorScenario } {
  const runnable: Record<string, RunnableElectorScenario> = {};
  for (const [name, scenario] of Object.entries(scenarios)) {
    runnable[name] = {
      title: scenario.title,
      timeoutMs: scenario.timeoutMs,
      run: async (options) => scenario.run(await electorScenarioOptions(options)),
    };
  }
  return runnable as { [K in keyof T]: RunnableElectorScenario };
}

/** {@link readingElectorCapabilities} for the fault scenarios. */
export function readingElectorCapabilitiesForFaults<T extends Record<string, ElectorFaultScenario>>(
  scenarios: T,
): { [K in keyof T]: RunnableElectorFaultScenario } {
  const runnable: Record<string, RunnableElectorFaultScenario> = {};
  for (const [name, scenario] of Object.entries(scenarios)) {
    runnable[name] = {
      title: scenario.title,
      timeoutMs: scenario.timeoutMs,
      run: async (options, faults) => scenario.run(await electorScenarioOptions(options), faults),
    };
  }
  return runnable as { [K in keyof T]: RunnableElectorFaultScenario };
}

/** Throws when `capabilities` is not a well-formed declaration, naming the field. */
export function checkElectorCapabilities(name: string, capabilities: ElectorCapabilities): void {
  const fail = (field: string, must: string, got: unknown): never => {
    throw new Error(
      `${name}: elector.capabilities.${field} must be ${must}, got ${JSON.stringify(got)}. Declare them on the elector (readonly capabilities: ElectorCapabilities); the conformance suite reads them from there.`,
    );
  };
  for (const field of ['minTtlMs', 'ttlGranularityMs'] as const) {
    const value = capabilities?.[field];
    if (!(Number.isSafeInteger(value) && value > 0)) fail(field, 'a positive integer (ms)', value);
  }
  if (typeof capabilities.durable !== 'boolean') fail('durable', 'a boolean', capabilities.durable);
  if (capabilities.clock !== 'backend' && capabilities.clock !== 'client') {
    fail('clock', "'backend' or 'client'", capabilities.clock);
  }
}
