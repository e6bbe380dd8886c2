import type { Lock, Store } from '@fleetcron/core';
import type { FaultKind } from './faults.js';

/** Backends the chaos fleet runs on. Memory cannot be shared by processes, so it is not one. */
export const CHAOS_BACKENDS = ['postgres', 'redis', 'etcd', 'sqlite'] as const;

/** A chaos backend name. */
export type ChaosBackendName = (typeof CHAOS_BACKENDS)[number];

/** Checks a `--backend` value, with the list of valid ones in the error. */
export function chaosBackendName(name: string): ChaosBackendName {
  if ((CHAOS_BACKENDS as readonly string[]).includes(name)) return name as ChaosBackendName;
  throw new Error(`unknown chaos backend "${name}": use one of ${CHAOS_BACKENDS.join(', ')}.`);
}

/**
 * The HA topologies the chaos fleet runs on (`--topology`), each failed over twice per run:
 * an etcd cluster of 3 members (leader SIGKILLed), PostgreSQL with a synchronous or an
 * asynchronous streaming standby (primary SIGKILLed, standby promoted), Redis with a replica and
 * 3 Sentinels (primary SIGKILLed, the Sentinels promote the replica).
 */
export const CHAOS_TOPOLOGIES = ['etcd-cluster', 'pg-sync', 'pg-async', 'redis-sentinel'] as const;

/** A chaos topology name. */
export type ChaosTopologyName = (typeof CHAOS_TOPOLOGIES)[number];

/** What an instance process connects to: a single-server backend or an HA topology. */
export type ChaosTargetName = ChaosBackendName | ChaosTopologyName;

/** The single-server backend each topology is the HA form of (the adapters its instances use). */
export const TOPOLOGY_BACKEND: Readonly<Record<ChaosTopologyName, ChaosBackendName>> = {
  'etcd-cluster': 'etcd',
  'pg-sync': 'postgres',
  'pg-async': 'postgres',
  'redis-sentinel': 'redis',
};

/** Checks a `--topology` value, with the list of valid ones in the error. */
export function chaosTopologyName(name: string): ChaosTopologyName {
  if ((CHAOS_TOPOLOGIES as readonly string[]).includes(name)) return name as ChaosTopologyName;
  throw new Error(`unknown chaos topology "${name}": use one of ${CHAOS_TOPOLOGIES.join(', ')}.`);
}

/** Checks a backend or topology name (what the driver hands an instance process). */
export function chaosTargetName(name: string): ChaosTargetName {
  return (CHAOS_TOPOLOGIES as readonly string[]).includes(name)
    ? (name as ChaosTopologyName)
    : chaosBackendName(name);
}

/**
 * `restart` and `dropConnections` of an HA topology's server: never called, since a topology's
 * only fault is `failover`.
 */
export async function failoverOnly(): Promise<never> {
  throw new Error('an HA topology takes the failover fault only');
}

/** Schema / key prefix the chaos fleet uses on every backend. */
export const CHAOS_NAMESPACE = 'fleetcron_chaos';

/** What one instance process builds from the server's address. */
export interface ChaosClient {
  lock: Lock;
  store?: Store;
  close(): Promise<void>;
}

/** The driver's handle on the dedicated server: its address for the instances, and its faults. */
export interface ChaosServer {
  /** Passed to each instance as `FLEETCRON_CHAOS_ADDRESS` (URL or comma-separated endpoints). */
  address: string;
  /** Restarts the server process (data kept). Unused when `faults` leaves it out. */
  restart(): Promise<void>;
  /** Cuts every client connection (etcd: a restart, since etcd cannot close them on demand). */
  dropConnections(): Promise<void>;
  /**
   * HA topologies: kills the leader/primary and waits for the promotion (etcd: a new leader
   * elected; PostgreSQL: the standby promoted and the address moved to it; Redis: a quorum of
   * Sentinels naming the replica). Answers what it killed (for the log) and when the kill was
   * done (monotonic ms, `monoNow()`): claims answered after it were answered by the survivors.
   */
  failover?(): Promise<{ killed: string; killedAt: number }>;
  /**
   * HA topologies: after {@link failover}, brings the killed member back as a follower (etcd:
   * restarted with its data; PostgreSQL: rebuilt as a standby of the promoted server,
   * synchronous again when it was; Redis: restarted empty as a replica), so a second failover
   * can follow.
   */
  heal?(): Promise<void>;
  /** A store on the server for the driver to read history from after the run, if any. */
  openStore(): Promise<{ store: Store; close(): Promise<void> } | undefined>;
  close(): Promise<void>;
}

/** One backend of the chaos fleet: the driver starts its server, each instance connects. */
export interface ChaosBackend {
  /**
   * The faults this backend can take. A server backend takes all four; an embedded one (SQLite)
   * has no server to restart or connections to cut.
   */
  faults: readonly FaultKind[];
  /**
   * True when every instance must run on the host's real clock: SQLite judges time with the
   * clock of the process that runs the statement, which libfaketime would skew, and a fleet on
   * one file is one host with one clock.
   */
  hostClock?: boolean;
  /** Starts a dedicated server with fault controls (`@fleetcron/testkit`, strategy `managed`). */
  startServer(): Promise<ChaosServer>;
  /** Builds this instance's Lock (and Store) on the server at `address`. */
  connect(address: string): Promise<ChaosClient>;
}

/**
 * Loads a backend from `backends/<name>.ts`, only when chosen. Extension point for a new backend:
 * add its name to {@link CHAOS_BACKENDS} and a file exporting a `ChaosBackend` named `backend`
 * (see `backends/sqlite.ts` for an embedded one: `address` is the database file, no server
 * faults). A backend without a Store is judged from the statuses the scheduler published
 * (`run.finished`) in the ledger.
 */
export async function loadChaosBackend(name: ChaosBackendName): Promise<ChaosBackend> {
  switch (name) {
    case 'postgres':
      return (await import('./backends/postgres.js')).backend;
    case 'redis':
      return (await import('./backends/redis.js')).backend;
    case 'etcd':
      return (await import('./backends/etcd.js')).backend;
    case 'sqlite':
      return (await import('./backends/sqlite.js')).backend;
  }
}

/**
 * Loads a backend (see {@link loadChaosBackend}) or an HA topology from
 * `topologies/<name>.ts`. A topology is a `ChaosBackend` whose server is the HA form, whose
 * only fault is `failover`, and whose instances connect as the adapter's README says for HA.
 */
export async function loadChaosTarget(name: ChaosTargetName): Promise<ChaosBackend> {
  switch (name) {
    case 'etcd-cluster':
      return (await import('./topologies/etcd-cluster.js')).topology;
    case 'pg-sync':
      return (await import('./topologies/postgres-replicated.js')).synchronous;
    case 'pg-async':
      return (await import('./topologies/postgres-replicated.js')).asynchronous;
    case 'redis-sentinel':
      return (await import('./topologies/redis-sentinel.js')).topology;
    default:
      return loadChaosBackend(name);
  }
}
