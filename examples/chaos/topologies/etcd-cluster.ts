import { startEtcdCluster } from '@fleetcron/testkit';
import { backend as etcd } from '../backends/etcd.js';
import { type ChaosBackend, failoverOnly } from '../backends.js';
import { monoNow } from '../ledger.js';

/**
 * etcd, 3 members (1 s election timeout): each instance connects as on one server, an `Etcd3`
 * client given every member's endpoint (the address is their comma-separated list). The failover
 * SIGKILLs the leader and waits until the others elect a new one; the heal restarts the killed
 * member with its data.
 */
export const topology: ChaosBackend = {
  faults: ['failover'],
  async startServer() {
    const cluster = await startEtcdCluster();
    let killed: number | undefined;
    return {
      address: cluster.endpoints.join(','),
      restart: failoverOnly,
      dropConnections: failoverOnly,
      async failover() {
        const leader = await cluster.leader();
        await cluster.kill(leader);
        const killedAt = monoNow();
        killed = leader;
        const elected = await cluster.leader();
        const names = cluster.members.map((m) => m.name);
        return { killed: `leader ${names[leader]} (${names[elected]} elected)`, killedAt };
      },
      async heal() {
        if (killed !== undefined) await cluster.start(killed);
        killed = undefined;
      },
      openStore: async () => undefined,
      close: () => cluster.close(),
    };
  },
  connect: etcd.connect,
};
