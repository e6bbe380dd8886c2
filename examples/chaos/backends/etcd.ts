import { EtcdLock } from '@fleetcron/lock-etcd';
import { startEtcd } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import { CHAOS_NAMESPACE, type ChaosBackend } from '../backends.js';
import { ALL_FAULTS } from '../faults.js';

/**
 * etcd: a dedicated server from @fleetcron/testkit; each instance opens its own Etcd3 client
 * with `EtcdLock` on it, and no Store (the ledger's `finished` lines carry the statuses). The
 * lock judges staleness with the instance's own (skewed) clock, as in production; etcd judges
 * lease expiry. `dropConnections` is a server restart (etcd cannot close client connections).
 */
export const backend: ChaosBackend = {
  faults: ALL_FAULTS,
  async startServer() {
    const server = await startEtcd({ strategy: 'managed' });
    return {
      address: server.endpoints.join(','),
      restart: () => server.restart(),
      dropConnections: () => server.dropConnections(),
      openStore: async () => undefined,
      close: () => server.close(),
    };
  },
  async connect(address) {
    const client = new Etcd3({ hosts: address.split(',') });
    const lock = new EtcdLock(client, { prefix: `${CHAOS_NAMESPACE}/` });
    return {
      lock,
      close: async () => {
        await lock.close();
        client.close();
      },
    };
  },
};
