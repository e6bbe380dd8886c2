import { EtcdElector, EtcdLock } from '@fleetcron/lock-etcd';
import { EtcdStore } from '@fleetcron/store-etcd';
import { startEtcd } from '@fleetcron/testkit';
import { Etcd3, EtcdLockFailedError } from 'etcd3';
import type { BackendModule, Claimer, Connection, OwnedLock } from './types.js';
import { BENCH_LEASE_MS, fleetcronClaimer } from './types.js';

function connect(connection: Connection): Etcd3 {
  if (!connection.endpoints?.length) throw new Error('etcd connection without endpoints');
  return new Etcd3({ hosts: connection.endpoints });
}

/**
 * etcd: `EtcdLock` (one transaction per claim, pooled leases) against the floor put-if-absent
 * transaction (`create_revision == 0`, + owner-checked delete transaction as release) and the
 * peer `client.lock(key).ttl(s).acquire()` of the etcd3 client (grant lease, transaction; its
 * release revokes the lease).
 */
export const etcdBackend: BackendModule = {
  name: 'etcd',
  floorName: 'txn if create_revision(k) == 0 then put (+ owner-checked delete txn)',
  peerName: 'etcd3 client.lock(k).ttl(30).acquire() + release()',
  async start() {
    const server = await startEtcd();
    return {
      name: 'etcd',
      connection: { endpoints: server.endpoints, namespace: 'bench/' },
      version: server.version,
      strategy: server.strategy,
      close: () => server.close(),
    };
  },
  async lock(connection): Promise<OwnedLock> {
    const client = connect(connection);
    const lock = new EtcdLock(client, { prefix: `${connection.namespace}fc/` });
    return {
      lock,
      elector: () => new EtcdElector(client, { prefix: `${connection.namespace}el/` }),
      async close() {
        await lock.close().catch(() => {});
        client.close();
      },
    };
  },
  store: {
    async prepare() {},
    async open(connection) {
      const client = connect(connection);
      const store = new EtcdStore(client, { prefix: `${connection.namespace}st/` });
      return { store, close: () => store.close() }; // closes the client too
    },
  },
  async claimer(connection, variant, owner): Promise<Claimer> {
    if (variant === 'fleetcron') return fleetcronClaimer(await this.lock(connection), owner);
    const client = connect(connection);
    const close = async () => client.close();
    if (variant === 'floor') {
      const prefix = `${connection.namespace}floor/`;
      return {
        async claim(key, fireAt) {
          const id = `${prefix}${key}/${fireAt}`;
          const { succeeded } = await client
            .if(id, 'Create', '==', 0)
            .then(client.put(id).value(owner))
            .commit();
          if (!succeeded) return { status: 'lost' };
          return {
            status: 'won',
            release: () =>
              client.if(id, 'Value', '==', owner).then(client.delete().key(id)).commit(),
          };
        },
        close,
      };
    }
    const prefix = `${connection.namespace}peer/`;
    const ttlSeconds = Math.ceil(BENCH_LEASE_MS / 1000);
    return {
      async claim(key, fireAt) {
        const lock = client.lock(`${prefix}${key}/${fireAt}`).ttl(ttlSeconds);
        try {
          await lock.acquire();
        } catch (error) {
          if (error instanceof EtcdLockFailedError) return { status: 'lost' };
          throw error;
        }
        return { status: 'won', release: () => lock.release() };
      },
      close,
    };
  },
};
