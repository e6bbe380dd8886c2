import type { Elector, Lock, Store } from '@fleetcron/core';

/**
 * The backends the benchmark knows. `memory` is the in-process reference (MemoryLock); `sqlite`
 * has no server (one file shared by the worker processes).
 */
export type BackendName = 'memory' | 'postgres' | 'redis' | 'etcd' | 'sqlite';

/** All backends, in report order. */
export const BACKENDS: readonly BackendName[] = ['memory', 'postgres', 'redis', 'etcd', 'sqlite'];

/** What is compared in the contention scenario. */
export type Variant = 'fleetcron' | 'floor' | 'peer';

/** All variants, in report order. */
export const VARIANTS: readonly Variant[] = ['fleetcron', 'floor', 'peer'];

/**
 * How to reach a started server; plain JSON, sent to worker processes, which open their own
 * connections with it.
 */
export interface Connection {
  url?: string;
  endpoints?: string[];
  /** PostgreSQL schema of the lock and floor tables / Redis or etcd key prefix. */
  namespace: string;
}

/** A claim attempt's answer, for every variant. */
export type Attempt =
  | { status: 'won'; release: (() => Promise<unknown>) | null }
  | { status: 'lost' | 'busy' };

/** One instance's claimer on its own connection: fleetcron's lock, a raw-client floor, or a peer. */
export interface Claimer {
  /** Claims fire `fireAt` of `key` for this instance. Throws when the backend does not answer. */
  claim(key: string, fireAt: number): Promise<Attempt>;
  /** Closes the connection (and any lock resources). */
  close(): Promise<void>;
}

/** A fleetcron lock on its own connection, with the teardown of both. */
export interface OwnedLock {
  lock: Lock;
  /**
   * A leader elector on the same client (scheduler `mode: 'leader'`), absent where the
   * backend has none (SQLite). Never closes the client.
   */
  elector?: () => Elector;
  close(): Promise<void>;
}

/** A fleetcron store on its own connection, with its teardown. */
export interface OwnedStore {
  store: Store;
  close(): Promise<void>;
}

/** How a backend's store is made in each instance process (the restart scenario). */
export interface StoreModule {
  /** Creates what the store needs on the server (tables), once, from the main process. */
  prepare(connection: Connection): Promise<void>;
  /** A store on its own new connection (`poolSize` connections for PostgreSQL). */
  open(connection: Connection, poolSize?: number): Promise<OwnedStore>;
}

/** A started server, held by the main process. */
export interface StartedBackend {
  name: BackendName;
  connection: Connection;
  /** Server version as reported by the testkit (`node vX` for memory). */
  version: string;
  /** How the testkit obtained it (`local`, `container`, `external`, or `in-process`). */
  strategy: string;
  close(): Promise<void>;
}

/** Lease length of every fleetcron claim in the benchmarks (etcd's minimum is 2 s). */
export const BENCH_LEASE_MS = 30_000;

/**
 * One backend's module: how to start its server and make claimers and locks on it. Each module
 * keeps its client library details to itself.
 */
export interface BackendModule {
  name: BackendName;
  /** Starts a throwaway server through `@fleetcron/testkit` and prepares tables. Main process only. */
  start(): Promise<StartedBackend>;
  /** One instance's claimer of `variant` on its own new connection. */
  claimer(connection: Connection, variant: Variant, owner: string): Promise<Claimer>;
  /** A fleetcron lock on its own new connection (`poolSize` connections for PostgreSQL). */
  lock(connection: Connection, poolSize?: number): Promise<OwnedLock>;
  /**
   * The backend's history store for the restart scenario; absent where processes cannot share
   * one (memory).
   */
  store?: StoreModule;
  /** What the peer is, for the report, and whether it gives once-per-fire semantics (none do). */
  peerName: string;
  /** What the floor is, for the report. */
  floorName: string;
}

/** Wraps a fleetcron lock as a claimer: exclusive:false per-fire lease, released by the winner. */
export function fleetcronClaimer(owned: OwnedLock, owner: string): Claimer {
  const { lock } = owned;
  return {
    async claim(key, fireAt) {
      const result = await lock.claim({
        key,
        fireAt,
        owner,
        leaseMs: BENCH_LEASE_MS,
        exclusive: false,
      });
      if (result.status !== 'won') return { status: result.status };
      const lease = result.lease;
      return { status: 'won', release: () => lock.release(lease) };
    },
    close: () => owned.close(),
  };
}
