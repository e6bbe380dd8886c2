import {
  type Clock,
  type Elector,
  InvalidOptionError,
  type JobDefinition,
  type Lock,
  Scheduler,
  type Store,
} from '@fleetcron/core';

/** What a fleet scenario gives one instance of the fleet. */
export interface FleetInstanceDeps {
  /** The instance's id: the owner of its claims. */
  instanceId: string;
  /** Its own lock client (instrumented by the scenario). */
  lock: Lock;
  /** The fleet's store (instrumented by the scenario); absent: the instance runs lock only. */
  store?: Store;
  clock: Clock;
  /** Lease of the jobs, ms (already accepted by the backend). */
  leaseMs: number;
  /** The jobs to run. */
  jobs: JobDefinition[];
  /** Heartbeat interval into the store's registry, ms (default: the scheduler's). */
  heartbeatMs?: number;
  /** Leader mode: the backend's elector and the term length, ms (absent: claims mode). */
  leader?: { elector: Elector; ttlMs: number };
  /** Sharded jobs: the scheduler's `shardGraceMs` (default: the scheduler's). */
  shardGraceMs?: number;
  /** The scheduler's `runRequestLeaseMs` (default: the scheduler's). */
  runRequestLeaseMs?: number;
  /** The scheduler's `runRequestPollMs` (default: the scheduler's). */
  runRequestPollMs?: number;
}

/** One running instance of the fleet, as the scenarios drive it. */
export interface FleetInstance {
  /** Starts scheduling. */
  start(): void;
  /** Stops scheduling and resolves once nothing of this instance runs any more. */
  stop(): Promise<void>;
}

/** Makes one fleet instance; the default is {@link schedulerInstance}, the real `Scheduler`. */
export type FleetInstanceFactory = (deps: FleetInstanceDeps) => FleetInstance;

/**
 * Where a {@link FleetInstanceFactory} lives: a module URL and the name of its export. A module,
 * not a function, because the freeze scenarios also start instances in child processes.
 */
export interface FleetInstanceModule {
  /** `file:` URL (or anything `import()` accepts) of the module. */
  url: string;
  /** Name of the export that is the factory. */
  exportName: string;
}

/** How long {@link schedulerInstance}'s `stop()` waits for running jobs, ms. */
const DRAIN_MS = 5_000;

/** The real thing: a fleetcron `Scheduler` with the given jobs. */
export const schedulerInstance: FleetInstanceFactory = (deps) => {
  const { instanceId, lock, store, clock, leaseMs, heartbeatMs, leader, shardGraceMs } = deps;
  const { runRequestLeaseMs, runRequestPollMs } = deps;
  const scheduler = new Scheduler({
    ...{ instanceId, lock, clock, leaseMs },
    ...(store === undefined ? {} : { store }),
    ...(heartbeatMs === undefined ? {} : { heartbeatMs }),
    ...(leader ? { mode: 'leader', elector: leader.elector, leaderTtlMs: leader.ttlMs } : {}),
    ...(shardGraceMs === undefined ? {} : { shardGraceMs }),
    ...(runRequestLeaseMs === undefined ? {} : { runRequestLeaseMs }),
    ...(runRequestPollMs === undefined ? {} : { runRequestPollMs }),
  });
  for (const job of deps.jobs) scheduler.add(job);
  return {
    start: () => scheduler.start(),
    stop: () => scheduler.stop({ drainMs: DRAIN_MS }),
  };
};

/**
 * The module of {@link schedulerInstance}. From the sources this file; from the built package
 * `dist/fleet-instance.js` (its own entry, so a child process loads it without vitest).
 */
export const schedulerInstanceModule: FleetInstanceModule = {
  url: import.meta.url.endsWith('.ts')
    ? import.meta.url
    : new URL('./fleet-instance.js', import.meta.url).href,
  exportName: 'schedulerInstance',
};

/** Imports the factory named by `ref`; a typed error when the export is not a function. */
export async function loadInstanceFactory(ref: FleetInstanceModule): Promise<FleetInstanceFactory> {
  const module = (await import(ref.url)) as Record<string, unknown>;
  const factory = module[ref.exportName];
  if (typeof factory !== 'function') {
    throw new InvalidOptionError(
      'instance',
      `${ref.url} has no function export ${JSON.stringify(ref.exportName)}; pass { url, exportName } of a FleetInstanceFactory.`,
    );
  }
  return factory as FleetInstanceFactory;
}
