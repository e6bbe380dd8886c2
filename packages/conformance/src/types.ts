import type { Clock, Elector, Lock, LockCapabilities, Store } from '@fleetcron/core';
import type { NewElectorOptions } from './elector/types.js';
import type { FleetInstanceModule } from './fleet/instance.js';

/** Options the suite passes to {@link LockFixture.newLock}. Adapters must honour both. */
export interface NewLockOptions {
  /** Claim window of the new client, in ms. Omitted: the adapter's default (5 minutes). */
  windowMs?: number;
  /**
   * The client's clock (the suite passes skewed clocks, e.g. `offsetClock(realClock, 30_000)`).
   * Adapters whose `capabilities.clock` is `backend` must not let it judge expiry or staleness;
   * adapters with `clock: 'client'` use it as their clock. Omitted: `realClock`.
   */
  clock?: Clock;
}

/** Reads the backend directly, below the `Lock` API, to prove what the API alone cannot. */
export interface LockProbe {
  /**
   * How many claim records (one per claimed `(key, fireAt)`, won or busy) the backend physically
   * holds in this fixture's namespace, all keys together, counting records that are past their
   * window but not yet deleted. Used to prove that storage stays bounded.
   */
  claimRecordCount(): Promise<number>;
}

/**
 * How a child process opens a client of its own on a fixture's namespace: a module and the JSON
 * argument of one of its exports. The fleet scenarios with thousands of jobs per process (the
 * many-jobs restart) start their children on such clients, so that the backend, not the test
 * process, carries their calls; without it the children's calls go through the test process's
 * clients over IPC, which works but measures the test process more than the backend.
 */
export interface ProcessClient {
  /**
   * URL of an ES module (`new URL('./process-client.ts', import.meta.url).href`); TypeScript
   * modules are run through tsx.
   */
  module: string;
  /** The module's export to call with {@link ProcessClient.config}: it returns the client (or a promise of it). */
  exportName: string;
  /** The argument of that export; JSON-serialisable (a URL, a schema or key prefix, a path). */
  config: unknown;
}

/**
 * One fresh, isolated namespace on a backend (own schema / database, key prefix or etcd prefix).
 * Two fixtures never see each other's keys.
 */
export interface LockFixture {
  /**
   * Makes another client on this fixture's namespace, with its OWN connection (pool, socket,
   * etcd client), so that concurrent claimers really race through the backend. Every call may
   * be given a different clock or window.
   */
  newLock(options?: NewLockOptions): Promise<Lock>;
  /** Optional direct reader of the backend (see {@link LockProbe}). */
  probe?: LockProbe;
  /**
   * Optional: makes an elector (the backend's `Elector`) with its OWN connection on this
   * fixture's namespace, for fleet scenarios that run schedulers in leader mode or with shards.
   * Backends without an elector leave it out; those scenarios then fail saying it is missing.
   */
  newElector?(options?: NewElectorOptions): Promise<Elector>;
  /**
   * Optional: how a child process opens a `Lock` of its own on this namespace, as `newLock()`
   * would make it (see {@link ProcessClient}). The child closes it (`close()`) when it stops.
   */
  processLock?: ProcessClient;
  /**
   * Closes every client `newLock()` (and `newElector()`) made and drops the namespace if it can.
   * Idempotent.
   */
  close(): Promise<void>;
}

/** Controls over a dedicated server the suite may break. Usually `@fleetcron/testkit`'s server. */
export interface ServerFaults {
  /** Stops and starts the server on the same port and data directory (what survives is durable). */
  restart(): Promise<void>;
  /** Kills every client connection from the server side; the server stays up. */
  dropConnections(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing answers. */
  pause(): Promise<void>;
  /** Unfreezes a paused server (SIGCONT). */
  resume(): Promise<void>;
  /** Stops the server (optional; not used by the current scenarios). */
  stop?(): Promise<void>;
  /** Starts a stopped server (optional; not used by the current scenarios). */
  start?(): Promise<void>;
}

/**
 * A dedicated server for fault scenarios: never the server other tests share, since the suite
 * restarts it, drops its connections and pauses it.
 */
export interface LockFaults {
  /** Same contract as {@link LockConformanceOptions.create}, on the dedicated server. */
  create(): Promise<LockFixture>;
  /** The dedicated server's fault controls. */
  server: ServerFaults;
  /** Tears the dedicated server down (called once, after the fault scenarios). */
  close?(): Promise<void>;
}

/**
 * `faults` as a value, or as a function that starts the dedicated server lazily (in the fault
 * scenarios' `beforeAll`), so a failing server start is reported by those scenarios only.
 */
export type LockFaultsOption = LockFaults | (() => Promise<LockFaults>);

/**
 * Options of `runLockConformance`. There is no `capabilities` option: the suite reads
 * `lock.capabilities` from the locks `create()` makes (one source of truth, the adapter's own
 * declaration), checks that every lock declares the same valid values, and adapts its timings
 * (leases >= `minLeaseMs`, rounded up to `leaseGranularityMs`) and its restart expectations
 * (`durable`, `durableMark`) to them.
 */
export interface LockConformanceOptions {
  /** Backend name, used in test titles: `${name} lock conformance`. */
  name: string;
  /** Makes a fresh, isolated namespace. Called once per scenario (twice by the isolation one). */
  create(): Promise<LockFixture>;
  /**
   * A dedicated server for the fault scenarios (dropped connection, restart). Required for every
   * backend that has a server: when absent and `inProcess` is not `true`, the fault scenarios
   * FAIL with a message saying what to pass. They are never skipped silently.
   */
  faults?: LockFaultsOption;
  /**
   * `true` only for backends without a server (like `MemoryLock`): there is no connection to
   * drop and nothing to restart, so the fault scenarios assert this declaration instead (the
   * backend must also declare `durable: false`). Must not be combined with `faults`.
   */
  inProcess?: boolean;
  /** Multiplies the suite's waits and deadlines for slow backends. Default 1. */
  timeScale?: number;
  /**
   * Registers only the scenarios named here (keys of `lockScenarios` and `lockFaultScenarios`),
   * for a second configuration of a backend that already runs the whole suite in another file
   * (a durable mode, a cluster): never for a backend's only run. Default: every scenario.
   */
  only?: readonly string[];
  /**
   * How long, in ms, a claim record may linger after `fireAt + windowMs` before the backend
   * deletes it (TTL granularity, lazy expiry). Default 1000. The bounded-storage scenario
   * requires every record older than `fireAt + windowMs + collectionLagMs` to be gone.
   */
  collectionLagMs?: number;
}

/** Two clients on one store namespace: what {@link StoreConformanceOptions.create} returns. */
export interface StoreFixture {
  /**
   * Makes another store client with its OWN connection on this fixture's namespace. Stores
   * made here must bound error text to {@link StoreConformanceOptions.maxErrorLength}.
   */
  newStore(): Promise<Store>;
  /**
   * Optional: how a child process opens a `Store` of its own on this namespace, as `newStore()`
   * would make it (see {@link ProcessClient}).
   */
  processStore?: ProcessClient;
  /** Closes every store `newStore()` made and drops the namespace if it can. Idempotent. */
  close(): Promise<void>;
}

/** Options of `runStoreConformance`. */
export interface StoreConformanceOptions {
  /** Backend name, used in test titles: `${name} store conformance`. */
  name: string;
  /** Makes a fresh, isolated namespace (own schema / key prefix). Called once per scenario. */
  create(): Promise<StoreFixture>;
  /** The error-text bound the stores use, in characters. Default 8192 (`boundErrorText`). */
  maxErrorLength?: number;
  /** Multiplies the suite's deadlines for slow backends. Default 1. */
  timeScale?: number;
}

/** Options of `runFleetConformance`: real `Scheduler`s on the backend, in real time. */
export interface FleetConformanceOptions {
  /** Backend name, used in test titles: `${name} fleet conformance`. */
  name: string;
  /** Same contract as {@link LockConformanceOptions.create}. Each scheduler gets its own client. */
  create(): Promise<LockFixture>;
  /**
   * Lease of the jobs in ms. Default: 2000 rounded up to the backend's `minLeaseMs` and
   * `leaseGranularityMs`. The paused-holder scenario waits about one lease for the takeover.
   */
  leaseMs?: number;
  /** Fires the three-instance scenario must observe. Default 30 (at one fire per second). */
  fires?: number;
  /** Multiplies the suite's deadlines for slow backends. Default 1. */
  timeScale?: number;
  /**
   * The instance the freeze scenarios drive (they also start it in child processes, hence a
   * module, not a function). Default: the real `Scheduler` (`schedulerInstanceModule`). The
   * suite's own tests pass a scheduler without deadline checks and expect the scenarios to fail.
   */
  instance?: FleetInstanceModule;
  /**
   * A dedicated server (as for `runLockConformance`) for the leader-mode server-restart
   * scenario, which restarts it under a fleet in leader mode. Without it that scenario is
   * reported skipped (not applicable), with a note saying to pass it.
   */
  faults?: LockFaultsOption;
  /**
   * Set (to a short reason) only for a backend that has no elector, like SQLite: the leader-mode
   * scenarios are then reported skipped with this note. Without it, a fixture without
   * `newElector` FAILS them, saying what to add.
   */
  electorless?: string;
  /**
   * Registers only part `index` (1-based) of `of` parts of the scenarios: every `of`-th scenario
   * in registration order, from the `index`-th. For a backend that runs the suite in `of` test
   * files, one part each, so that they can run side by side: together the parts register every
   * scenario exactly once, including scenarios added later. Default: every scenario.
   */
  part?: { index: number; of: number };
  /**
   * The backend's store, for the fleet scenarios that run with the store on (the many-jobs
   * restart with its history). Default: a `MemoryStore` in the test process, which the child
   * processes reach over IPC (as every fleet-control scenario's store). Give its fixtures a
   * {@link StoreFixture.processStore} so that the children open stores of their own.
   */
  store?: () => Promise<StoreFixture>;
  /**
   * Scenarios this backend is known to fail, by name (a key of `fleetScenarios`), each with a
   * short reason (the issue and what fails). They are registered skipped, the reason in their
   * title, so the report shows them; remove an entry when its issue is fixed. For a backend's own
   * repository only: a backend that claims conformance declares none.
   */
  knownFailures?: Readonly<Record<string, string>>;
}

/**
 * What a scenario runs with: the adapter's options plus the capabilities its locks declare
 * (read from `lock.capabilities` by the suite, never passed by the adapter).
 */
export interface LockScenarioOptions extends LockConformanceOptions {
  /** `lock.capabilities` of the fixture's locks, as read by the suite. */
  readonly capabilities: LockCapabilities;
}

/**
 * How a lock scenario is written: a plain async function of {@link LockScenarioOptions}. The
 * suite exports every scenario as a {@link RunnableLockScenario} (see `lockScenarios`), which
 * reads the capabilities from the lock first.
 */
export interface LockScenario {
  /** The `it()` title. */
  title: string;
  /** Test timeout in ms before `timeScale`. */
  timeoutMs: number;
  /** Runs the scenario; rejects with an assertion error when the backend breaks the contract. */
  run(options: LockScenarioOptions): Promise<void>;
}

/** A scenario that breaks a dedicated server (see {@link LockFaults}), as written. */
export interface LockFaultScenario {
  title: string;
  timeoutMs: number;
  run(options: LockScenarioOptions, faults: LockFaults): Promise<void>;
}

/**
 * One lock scenario as a plain async function of the adapter's options, so that it can be run
 * outside the registered `it()`s (the suite's own tests run each scenario against deliberately
 * broken locks and expect it to fail). `run` reads the capabilities from a lock of
 * `options.create()`, then creates and closes the fixtures it needs.
 */
export interface RunnableLockScenario {
  /** The `it()` title. */
  title: string;
  /** Test timeout in ms before `timeScale`. */
  timeoutMs: number;
  /** Runs the scenario; rejects with an assertion error when the backend breaks the contract. */
  run(options: LockConformanceOptions): Promise<void>;
}

/** A fault scenario as a plain async function of the adapter's options (see {@link RunnableLockScenario}). */
export interface RunnableLockFaultScenario {
  title: string;
  timeoutMs: number;
  run(options: LockConformanceOptions, faults: LockFaults): Promise<void>;
}

/** One store scenario as a plain async function (see {@link LockScenario}). */
export interface StoreScenario {
  title: string;
  timeoutMs: number;
  run(options: StoreConformanceOptions): Promise<void>;
}

/** One fleet scenario as a plain async function (see {@link LockScenario}). */
export interface FleetScenario {
  title: string;
  timeoutMs: number;
  run(options: FleetConformanceOptions): Promise<void>;
}
