import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { runRequestChannel } from '../src/channel-listener.js';
import { PostgresStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// Fleet control beyond the conformance suite: tables made before it, and the LISTEN connection
// being killed by the server.

const databaseUrl = postgresDatabase();
const create = storeFixtures(databaseUrl);

/** Polls `attempt` every 100 ms until it returns true; fails after `timeoutMs` naming `what`. */
async function until(attempt: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await attempt())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('PostgresStore fleet control', () => {
  it('migrate() upgrades tables made before fleet control (columns and tables added)', async () => {
    const fixture = await create();
    try {
      const schema = `${fixture.schema}_pre`;
      await fixture.admin.query(`CREATE SCHEMA "${schema}";
        CREATE TABLE "${schema}".fleetcron_executions (id text COLLATE "C" PRIMARY KEY,
          job text COLLATE "C" NOT NULL, fire_at bigint NOT NULL, status text NOT NULL,
          attempt integer NOT NULL, instance_id text NOT NULL, token bigint,
          started_at bigint NOT NULL, finished_at bigint, error text, reason text);
        CREATE TABLE "${schema}".fleetcron_jobs (job text COLLATE "C" PRIMARY KEY,
          paused boolean NOT NULL DEFAULT false, last_status text, last_fire_at bigint,
          last_finished_at bigint);
        INSERT INTO "${schema}".fleetcron_jobs (job, paused) VALUES ('old', true);`);
      const store = new PostgresStore(fixture.admin, { schema });
      await store.migrate();
      expect(await store.getJobState('old')).toMatchObject({ paused: true, pausedBy: null });
      await store.setPaused('old', true, { by: 'ops' });
      expect(await store.getJobState('old')).toMatchObject({ paused: true, pausedBy: 'ops' });
      await store.record({
        id: 'e1',
        job: 'old',
        fireAt: 1,
        status: 'succeeded',
        attempt: 1,
        instanceId: 'i',
        token: 1,
        startedAt: 2,
        finishedAt: 3,
        error: null,
        requestedBy: 'alice',
      });
      expect((await store.history('old')).executions[0]?.requestedBy).toBe('alice');
      const request = await store.requestRun({ job: 'old', requestedBy: 'cli' });
      const [taken] = await store.takeRunRequests(['old'], 'i');
      expect(taken).toMatchObject({ ...request, takes: 1 });
      await fixture.admin.query(`DROP SCHEMA "${schema}" CASCADE`);
    } finally {
      await fixture.close();
    }
  });

  it('LISTEN comes back after the server kills its connection; unsubscribe returns it', async () => {
    const fixture = await create();
    try {
      const listening = (await fixture.newStore()) as PostgresStore;
      const writer = (await fixture.newStore()) as PostgresStore;
      const woken: string[] = [];
      const unsubscribe = listening.watchRunRequests((job) => woken.push(job));
      const wakes = async (job: string) => {
        await until(
          async () => {
            await writer.requestRun({ job, requestedBy: 'test' });
            return woken.includes(job);
          },
          15_000,
          `a notification for ${job}`,
        );
      };
      await wakes('before');
      const channel = runRequestChannel(fixture.schema, 'fleetcron');
      const listeners = `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND query = 'LISTEN "${channel}"'`;
      const { rowCount } = await fixture.admin.query(
        `SELECT pg_terminate_backend(pid) FROM (${listeners}) l`,
      );
      expect(rowCount, 'one LISTEN connection was killed').toBe(1);
      await wakes('after');
      unsubscribe();
      await until(
        async () => (await fixture.admin.query(listeners)).rowCount === 0,
        10_000,
        'the LISTEN connection to be given back (UNLISTEN, released)',
      );
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
