import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type PostgresReplicated, startPostgresReplicated, waitFor } from '../../src/index.js';

// A PostgreSQL primary with a streaming standby from local binaries: the standby follows and
// refuses writes; with the primary killed, the promoted standby takes writes, and (synchronous)
// keeps every commit the primary answered.

let pair: PostgresReplicated | undefined;
afterEach(async () => {
  await pair?.close();
  pair = undefined;
}, 60_000);

async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, query_timeout: 10_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe('startPostgresReplicated', () => {
  it('asynchronous: the standby follows and is read-only; promoted after the primary is killed, it takes writes', async () => {
    pair = await startPostgresReplicated();
    const [primary, standby] = pair.urls;
    await sql(primary, 'CREATE TABLE t (v int); INSERT INTO t VALUES (1)');
    await pair.waitCaughtUp();
    expect(await sql(standby, 'SELECT v FROM t')).toEqual([{ v: 1 }]);
    await expect(sql(standby, 'INSERT INTO t VALUES (2)')).rejects.toMatchObject({
      code: '25006', // read_only_sql_transaction
    });
    await pair.kill(0);
    await expect(sql(primary, 'SELECT 1')).rejects.toThrow();
    await pair.promote();
    await sql(standby, 'INSERT INTO t VALUES (2)');
    expect(await sql(standby, 'SELECT v FROM t ORDER BY v')).toEqual([{ v: 1 }, { v: 2 }]);
  }, 90_000);

  it('synchronous: a commit waits for the standby, and one the primary answered is on the promoted standby', async () => {
    pair = await startPostgresReplicated({ synchronous: true });
    const [primary, standby] = pair.urls;
    const [setting] = await sql<{ synchronous_standby_names: string }>(
      primary,
      'SHOW synchronous_standby_names',
    );
    expect(setting?.synchronous_standby_names).not.toBe('');
    await sql(primary, 'CREATE TABLE t (v int)');
    // With the standby frozen, a commit waits for it (wait event SyncRep) and is not answered.
    await pair.pause(1);
    let answered = false;
    const insert = sql(primary, 'INSERT INTO t VALUES (1)').then(() => {
      answered = true;
    });
    await waitFor(
      async () =>
        (
          await sql<{ n: string }>(
            primary,
            "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event = 'SyncRep'",
          )
        )[0]?.n === '1',
      { timeoutMs: 15_000, message: 'the commit waiting for the synchronous standby' },
    );
    expect(answered).toBe(false);
    await pair.resume(1);
    await insert;
    await pair.kill(0);
    await pair.promote();
    expect(await sql(standby, 'SELECT v FROM t')).toEqual([{ v: 1 }]);
  }, 90_000);

  it('synchronous, twice: the killed primary rejoined as a standby of the promoted one, then promoted after it is killed in turn', async () => {
    pair = await startPostgresReplicated({ synchronous: true });
    const [first, second] = pair.urls;
    await sql(first, 'CREATE TABLE t (v int); INSERT INTO t VALUES (1)');
    await pair.kill(0);
    await pair.promote(1);
    await pair.rejoin(0);
    expect(await sql(first, 'SELECT pg_is_in_recovery() AS r')).toEqual([{ r: true }]);
    // the promoted server waits for the rejoined standby again
    const [setting] = await sql<{ synchronous_standby_names: string }>(
      second,
      'SHOW synchronous_standby_names',
    );
    expect(setting?.synchronous_standby_names).not.toBe('');
    await sql(second, 'INSERT INTO t VALUES (2)');
    await pair.kill(1);
    await pair.promote(0);
    expect(await sql(first, 'SELECT v FROM t ORDER BY v')).toEqual([{ v: 1 }, { v: 2 }]);
    await expect(pair.rejoin(0)).rejects.toThrow(/kill it first/);
  }, 120_000);
});
