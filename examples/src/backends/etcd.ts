import type { Clock } from '@fleetcron/core';
import { EtcdLock } from '@fleetcron/lock-etcd';
import { startEtcd } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import type { DemoBackend } from '../backends.js';

/**
 * etcd: a throwaway server from @fleetcron/testkit (or `FLEETCRON_TEST_ETCD_ENDPOINTS`), one
 * Etcd3 client, `EtcdLock` on it; no store (history belongs in PostgreSQL or Redis, see the
 * lock-etcd README). etcd cannot read a clock in a transaction, so the demo's clock judges
 * staleness; lease expiry is judged by the etcd server.
 */
export async function openEtcd(clock: Clock): Promise<DemoBackend> {
  const server = await startEtcd();
  const client = new Etcd3({ hosts: server.endpoints });
  const lock = new EtcdLock(client, { prefix: 'fleetcron-demo/', clock });
  return {
    lock,
    close: async () => {
      await lock.close();
      client.close();
      await server.close();
    },
  };
}
