import { PostgresLock } from '@fleetcron/lock-postgres';
import { PostgresStore } from '@fleetcron/store-postgres';
import { startPostgresReplicated, startStallLink } from '@fleetcron/testkit';
import pg from 'pg';
import { backend as postgres } from '../backends/postgres.js';
import { CHAOS_NAMESPACE, type ChaosBackend, failoverOnly } from '../backends.js';
import { monoNow } from '../ledger.js';

/**
 * PostgreSQL primary + streaming standby behind one address (a testkit `StallLink` standing in
 * for a virtual IP); instances connect as on one server (`pg.Pool` with `PostgresLock` +
 * `PostgresStore`). The failover SIGKILLs the primary, promotes the standby and moves the address
 * to it (open connections drop, the pools reconnect); the heal rebuilds the killed server as a
 * standby of the promoted one (synchronous again for `pg-sync`).
 */
function replicated(synchronous: boolean): ChaosBackend {
  return {
    faults: ['failover'],
    async startServer() {
      const pair = await startPostgresReplicated({ synchronous });
      const address = await startStallLink({ port: pair.ports[0] });
      const url = `postgres://postgres@127.0.0.1:${address.port}/postgres`;
      const admin = new pg.Pool({ connectionString: url, max: 1 });
      admin.on('error', () => {});
      try {
        await new PostgresLock(admin, { schema: CHAOS_NAMESPACE }).migrate();
        await new PostgresStore(admin, { schema: CHAOS_NAMESPACE }).migrate();
      } finally {
        await admin.end();
      }
      let primary: 0 | 1 = 0;
      let killed: 0 | 1 | undefined;
      return {
        address: url,
        restart: failoverOnly,
        dropConnections: failoverOnly,
        async failover() {
          const old = primary;
          const standby = old === 0 ? 1 : 0;
          await pair.kill(old);
          const killedAt = monoNow();
          killed = old;
          await pair.promote(standby);
          address.moveTo({ port: pair.ports[standby] });
          primary = standby;
          const killedWhat = `primary :${pair.ports[old]} (standby :${pair.ports[standby]} promoted)`;
          return { killed: killedWhat, killedAt };
        },
        async heal() {
          if (killed !== undefined) await pair.rejoin(killed);
          killed = undefined;
        },
        async openStore() {
          const reader = new pg.Pool({ connectionString: url, max: 1 });
          reader.on('error', () => {});
          return {
            store: new PostgresStore(reader, { schema: CHAOS_NAMESPACE }),
            close: () => reader.end(),
          };
        },
        async close() {
          await address.close();
          await pair.close();
        },
      };
    },
    connect: postgres.connect,
  };
}

/** `pg-sync`: the standby is synchronous (a commit waits for its flush). */
export const synchronous = replicated(true);
/** `pg-async`: asynchronous streaming replication. */
export const asynchronous = replicated(false);
