import { type FailoverTopology, runFailoverConformance } from '@fleetcron/conformance';
import { startPostgresReplicated, startStallLink } from '@fleetcron/testkit';
import pg from 'pg';
import { PostgresLock } from '../../src/index.js';

// Failover of PostgreSQL with a streaming standby (#31): real schedulers claim 5 jobs every
// second on 3 instances, each on a pool of its own to one address (a testkit link standing in for
// a virtual IP); the primary is SIGKILLed, the standby promoted and the address moved to it.
// Judged from the ledger of runs. Synchronous standby: 0 duplicates, tokens increasing per job,
// claims back. Asynchronous (FLEETCRON_FAILOVER=1): duplicates measured, not asserted.

async function topology(synchronous: boolean): Promise<FailoverTopology> {
  const pair = await startPostgresReplicated({ synchronous });
  const address = await startStallLink({ port: pair.ports[0] });
  const url = `postgres://postgres@127.0.0.1:${address.port}/postgres`;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  admin.on('error', () => {});
  await new PostgresLock(admin, { schema: 'failover' }).migrate();
  await admin.end();
  const pools: pg.Pool[] = [];
  return {
    async newLock() {
      const pool = new pg.Pool({ connectionString: url, max: 4, keepAlive: true });
      pools.push(pool);
      return new PostgresLock(pool, { schema: 'failover' });
    },
    async fail() {
      await pair.kill(0);
      await pair.promote();
      address.moveTo({ port: pair.ports[1] });
    },
    async close() {
      await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
      await address.close();
      await pair.close();
    },
  };
}

const long = process.env.FLEETCRON_FAILOVER === '1';

runFailoverConformance({
  name: 'postgres (primary + standby)',
  cases: [
    {
      title: 'synchronous standby promoted after the primary is SIGKILLed',
      topology: () => topology(true),
    },
    ...(long
      ? [
          {
            title: 'asynchronous standby promoted after the primary is SIGKILLed',
            topology: () => topology(false),
            duplicates: 'measure' as const,
          },
        ]
      : []),
  ],
});
