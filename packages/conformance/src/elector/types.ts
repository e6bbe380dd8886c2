import type { Clock, Elector, ElectorCapabilities } from '@fleetcron/core';
import type { ServerFaults } from '../types.js';
import type { CandidateModule } from './candidate-module.js';

/** Options the suite passes to {@link ElectorFixture.newElector}. */
export interface NewElectorOptions {
  /**
   * The client's clock (the suite passes skewed ones). Adapters with `capabilities.clock:
   * 'backend'` must not let it judge expiry; `client` adapters use it. Omitted: `realClock`.
   */
  clock?: Clock;
}

/** One fresh, isolated namespace on a backend (schema, key prefix, etcd prefix). */
export interface ElectorFixture {
  /** Makes another elector on this namespace with its OWN connection (pool, socket, client). */
  newElector(options?: NewElectorOptions): Promise<Elector>;
  /** Closes every elector and connection the fixture made; drops the namespace. Idempotent. */
  close(): Promise<void>;
}

/** A dedicated server the fault scenarios may restart and whose connections they may drop. */
export interface ElectorFaults {
  /** Same contract as {@link ElectorConformanceOptions.create}, on the dedicated server. */
  create(): Promise<ElectorFixture>;
  /** The server's fault controls (testkit's servers have them). */
  server: ServerFaults;
  /** Tears the dedicated server down (once, after the fault scenarios). */
  close?(): Promise<void>;
}

/**
 * Options of `runElectorConformance`. There is no `capabilities` option: the suite reads
 * `elector.capabilities` from the electors `create()` makes and adapts its TTLs to them.
 */
export interface ElectorConformanceOptions {
  /** Backend name, used in test titles: `${name} elector conformance`. */
  name: string;
  /** Makes a fresh, isolated namespace. Called once per scenario (twice by the isolation one). */
  create(): Promise<ElectorFixture>;
  /**
   * Starts a dedicated server for the fault scenarios (restart, dropped connections). Required
   * for every backend with a server: without it (and without `inProcess`) they FAIL.
   */
  faults?: () => Promise<ElectorFaults>;
  /** `true` only for backends without a server (`MemoryElector`); not with `faults`. */
  inProcess?: boolean;
  /** Multiplies the suite's waits and deadlines for slow backends. Default 1. */
  timeScale?: number;
  /**
   * The candidate the scenarios drive (also in child processes, hence a module). Default: core's
   * `Candidate`. The suite's own tests pass a candidate that never aborts and expect failures.
   */
  candidate?: CandidateModule;
}

/** What a scenario runs with: the adapter's options plus `elector.capabilities`, as read. */
export interface ElectorScenarioOptions extends ElectorConformanceOptions {
  /** `elector.capabilities` of the fixture's electors, as read by the suite. */
  readonly capabilities: ElectorCapabilities;
}

/** How an elector scenario is written: a plain async function of {@link ElectorScenarioOptions}. */
export interface ElectorScenario {
  title: string;
  timeoutMs: number;
  run(options: ElectorScenarioOptions): Promise<void>;
}

/** A scenario that breaks a dedicated server, as written. */
export interface ElectorFaultScenario {
  title: string;
  timeoutMs: number;
  run(options: ElectorScenarioOptions, faults: ElectorFaults): Promise<void>;
}

/**
 * One elector scenario as a plain async function of the adapter's options (the suite's
 * self-tests run them directly); it reads the capabilities from an elector first.
 */
export interface RunnableElectorScenario {
  title: string;
  timeoutMs: number;
  run(options: ElectorConformanceOptions): Promise<void>;
}

/** A fault scenario as a plain async function of the adapter's options. */
export interface RunnableElectorFaultScenario {
  title: string;
  timeoutMs: number;
  run(options: ElectorConformanceOptions, faults: ElectorFaults): Promise<void>;
}
