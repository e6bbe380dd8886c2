import { randomUUID } from 'node:crypto';
import { type FailoverTopology, runFailoverConformance } from '@fleetcron/conformance';
import { type EtcdCluster, startEtcdCluster } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { EtcdLock } from '../../src/index.js';

// Failover on a 3-member etcd cluster (#31): real schedulers claim 5 jobs every second on 3
// instances while the leader is SIGKILLed (then restarted) or SIGSTOPped (then resumed); judged
// from the ledger of runs: 0 duplicates, tokens increasing per job, claims back after each fault.
// Leases of 5 s: the scheduler gives up on a claim after one lease, and a claim sent to a
// follower while the cluster elects a new leader (1 s election timeout) is answered only after
// the election; with 2 s leases such claims committed after the give-up and their fires were
// lost (docs/performance/failover.md).
// FLEETCRON_FAILOVER=1 adds the frozen leader and the longer cases (two faults per run) used for
// the figures in docs/performance/failover.md.

/** A lock per instance, each on a client given every member's endpoint. */
function topology(
  cluster: EtcdCluster,
  fault: (cluster: EtcdCluster) => Promise<number>,
): FailoverTopology {
  const prefix = `failover/${randomUUID()}/`;
  const opened: { lock: EtcdLock; client: Etcd3 }[] = [];
  let failed: number | undefined;
  let paused = false;
  return {
    async newLock() {
      const client = new Etcd3({ hosts: [...cluster.endpoints] });
      const lock = new EtcdLock(client, { prefix });
      opened.push({ lock, client });
      return lock;
    },
    async fail() {
      failed = await fault(cluster);
      paused = cluster.members[failed]?.state === 'paused';
    },
    async heal() {
      if (failed === undefined) return;
      if (paused) await cluster.resume(failed);
      else await cluster.start(failed);
      failed = undefined;
    },
    async close() {
      for (const { lock, client } of opened) {
        await lock.close();
        client.close();
      }
      await cluster.close();
    },
  };
}

const killLeader = async (cluster: EtcdCluster) => {
  const leader = await cluster.leader();
  await cluster.kill(leader);
  return leader;
};
const freezeLeader = async (cluster: EtcdCluster) => {
  const leader = await cluster.leader();
  await cluster.pause(leader);
  return leader;
};

const long = process.env.FLEETCRON_FAILOVER === '1';

runFailoverConformance({
  name: 'etcd (3 members)',
  cases: [
    {
      title: 'leader SIGKILLed during a burst of claims',
      topology: async () => topology(await startEtcdCluster(), killLeader),
      run: { leaseMs: 5000 },
    },
    ...(long
      ? [
          // Opt-in: beside other test files on 2 cores claims did not come back within 8 s in
          // some runs (docs/performance/failover.md).
          {
            title: 'leader SIGSTOPped during a burst of claims',
            topology: async () => topology(await startEtcdCluster(), freezeLeader),
            run: { leaseMs: 5000 },
          },
          {
            title: 'leader SIGKILLed twice (restarted between), 4 instances',
            topology: async () => topology(await startEtcdCluster(), killLeader),
            run: { instances: 4, faults: 2, afterMs: 10_000, leaseMs: 5000 },
            timeoutMs: 180_000,
          },
          {
            title: 'leader SIGSTOPped twice (resumed between), 4 instances',
            topology: async () => topology(await startEtcdCluster(), freezeLeader),
            run: { instances: 4, faults: 2, afterMs: 10_000, leaseMs: 5000 },
            timeoutMs: 180_000,
          },
        ]
      : []),
  ],
});
