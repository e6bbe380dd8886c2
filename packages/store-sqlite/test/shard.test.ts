import { execution } from '@fleetcron/conformance';
import Database from 'libsql';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { storeFixtures } from './fixture.js';

// Sharded fires (issue 16): a database file made before shards gains the `shard` column.
// That every store keeps and returns Execution.shard is the conformance scenario `shardKept`.

const create = storeFixtures();

describe('SqliteStore: the shard column', () => {
  it('opening a file made before shards adds the shard column', async () => {
    const fixture = await create();
    try {
      const db = new Database(fixture.file);
      db.exec(`CREATE TABLE fleetcron_executions (id TEXT PRIMARY KEY, job TEXT NOT NULL,
        fire_at INTEGER NOT NULL, status TEXT NOT NULL, attempt INTEGER NOT NULL,
        instance_id TEXT NOT NULL, token INTEGER, started_at INTEGER NOT NULL,
        finished_at INTEGER, error TEXT, reason TEXT, requested_by TEXT)`);
      db.close();
      const store = new SqliteStore(fixture.file);
      try {
        const row = execution('old file', 1, { shard: { index: 1, count: 2 } });
        await store.record(row);
        const { executions } = await store.history(row.job);
        expect(executions[0]?.shard).toEqual({ index: 1, count: 2 });
      } finally {
        await store.close();
      }
    } finally {
      await fixture.close();
    }
  });
});
