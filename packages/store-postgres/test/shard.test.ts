import { execution } from '@fleetcron/conformance';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// Sharded fires (issue 16): an executions table made before shards gains the `shard` column.
// That every store keeps and returns Execution.shard is the conformance scenario `shardKept`.

const databaseUrl = postgresDatabase();
const create = storeFixtures(databaseUrl);

describe('PostgresStore: the shard column', () => {
  it('migrate() adds the shard column to an executions table made before it', async () => {
    const fixture = await create();
    try {
      const schema = `${fixture.schema}_old`;
      await fixture.admin.query(`CREATE SCHEMA "${schema}";
        CREATE TABLE "${schema}".fleetcron_executions (id text COLLATE "C" PRIMARY KEY,
          job text COLLATE "C" NOT NULL, fire_at bigint NOT NULL, status text NOT NULL,
          attempt integer NOT NULL, instance_id text NOT NULL, token bigint,
          started_at bigint NOT NULL, finished_at bigint, error text, reason text,
          requested_by text);`);
      try {
        const store = new PostgresStore(fixture.admin, { schema });
        await store.migrate();
        const row = execution('old table', 1, { shard: { index: 1, count: 2 } });
        await store.record(row);
        const { executions } = await store.history(row.job);
        expect(executions[0]?.shard).toEqual({ index: 1, count: 2 });
      } finally {
        await fixture.admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      }
    } finally {
      await fixture.close();
    }
  });
});
