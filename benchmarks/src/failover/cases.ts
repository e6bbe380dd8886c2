/** The failover scenario's topologies: names, and what the report says of each. Pure. */
import type { FailoverRunOptions } from '@fleetcron/conformance';

/** The topologies of `pnpm bench:failover`, in the order they run. */
export const FAILOVER_TOPOLOGIES = [
  'etcd-cluster',
  'pg-sync',
  'pg-async',
  'redis-sentinel',
  'redis-sentinel-ack',
] as const;

/** One topology of the failover scenario (`--topologies`). */
export type FailoverTopologyName = (typeof FAILOVER_TOPOLOGIES)[number];

/** What the report says of a topology, besides its figures. */
export interface FailoverTopologyInfo {
  /** Topology and fault, one line. */
  label: string;
  /**
   * `'none'`: a duplicate is a violation (the design closes it: raft, a synchronous standby).
   * `'measure'`: duplicates are reported only (asynchronous replication, where the README states
   * the gap).
   */
  duplicates: 'none' | 'measure';
  /** The stated bound on the time until claims succeed again, ms, if the issue states one. */
  resumeBoundMs: number | null;
  /** What the reader must know to read the row. */
  note: string;
  /** Scenario options (lease, how long the fleet runs after the fault). */
  run: FailoverRunOptions;
}

/** The etcd cluster's election timeout, ms (etcd's default). */
export const ETCD_ELECTION_TIMEOUT_MS = 1000;
/** Labels, expectations and notes per topology. */
export const TOPOLOGY_INFO: Readonly<Record<FailoverTopologyName, FailoverTopologyInfo>> = {
  'etcd-cluster': {
    label: 'etcd, 3 members, leader SIGKILLed',
    duplicates: 'none',
    resumeBoundMs: ETCD_ELECTION_TIMEOUT_MS + 1000,
    note: 'a claim is a raft-committed txn; bound: election timeout (1 s) + 1 s; 5 s leases',
    run: { leaseMs: 5000, afterMs: 8000 },
  },
  'pg-sync': {
    label: 'PostgreSQL, synchronous standby promoted (primary SIGKILLed)',
    duplicates: 'none',
    resumeBoundMs: null,
    note: 'one moving address (testkit StallLink as a virtual IP); commits wait for the standby',
    run: { afterMs: 8000 },
  },
  'pg-async': {
    label: 'PostgreSQL, asynchronous standby promoted (primary SIGKILLed)',
    duplicates: 'measure',
    resumeBoundMs: null,
    note: 'on one host the standby is not behind: 0 duplicates here is not a guarantee',
    run: { afterMs: 8000 },
  },
  'redis-sentinel': {
    label: 'Redis, primary + replica + 3 Sentinels, primary SIGKILLed',
    duplicates: 'measure',
    resumeBoundMs: null,
    note: 'old primary restarted as a replica once promoted; repl-diskless-sync-delay 0',
    run: { afterMs: 12_000 },
  },
  'redis-sentinel-ack': {
    label: 'same, replicaAck { replicas: 1, timeoutMs: 250 }',
    duplicates: 'measure',
    resumeBoundMs: null,
    note: 'claims back once a replica follows the promoted primary (WAIT fails closed until then)',
    run: { afterMs: 12_000 },
  },
};
