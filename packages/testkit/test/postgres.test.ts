import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres } from '../src/postgres.js';
import { serverTree, stillRunning } from '../src/proc.js';
import type { PostgresServer } from '../src/types.js';
import { waitFor } from '../src/wait.js';
import { existsSync, pgrep, waitServerGone } from './helpers.js';

const pools: pg.Pool[] = [];

/** A pool whose idle-client errors are recorded instead of crashing the run. */
function pool(url: string, options: pg.PoolConfig = {}) {
  const p = new pg.Pool({ connectionString: url, max: 2, ...options });
  const errors: Error[] = [];
  p.on('error', (e) => errors.push(e));
  pools.push(p);
  return Object.assign(p, { errors });
}

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres({ strategy: 'managed' });
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => {})));
  await server.close();
});

describe('startPostgres (local)', () => {
  it('starts a server that answers on the advertised URL', async () => {
    expect(server.kind).toBe('postgres');
    expect(server.strategy).toBe('local');
    expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
    expect(server.version).toMatch(/^\d+\.\d+/);
    const { rows } = await pool(server.url).query<{ v: string }>(
      "SELECT current_setting('server_version') AS v",
    );
    expect(rows[0]?.v.startsWith(server.version)).toBe(true);
  });

  it('createDatabase makes a separate database', async () => {
    const url = await server.createDatabase();
    expect(url).toMatch(/\/t_\d+_\d+_[a-z0-9]+$/);
    const named = await server.createDatabase('named_db');
    expect(named).toBe(`postgres://postgres@127.0.0.1:${server.port}/named_db`);
    const { rows } = await pool(named).query<{ db: string }>('SELECT current_database() AS db');
    expect(rows[0]?.db).toBe('named_db');
    await expect(server.createDatabase('Bad-Name')).rejects.toThrow(/invalid database name/);
  });

  it('keeps data across stop/start and a crash restart, on the same port', async () => {
    const url = await server.createDatabase();
    const p = pool(url);
    await p.query('CREATE TABLE t (v int)');
    await p.query('INSERT INTO t VALUES (1)');
    const port = server.port;
    const pid = server.pid;
    await server.stop();
    expect(server.state).toBe('stopped');
    expect(server.pid).toBeUndefined();
    await server.start();
    expect(server.pid).not.toBe(pid);
    expect(server.port).toBe(port);
    const count = async () => Number((await p.query('SELECT count(*) AS n FROM t')).rows[0].n);
    expect(await waitFor(count, { message: 'rows after restart' })).toBe(1);
    await p.query('INSERT INTO t VALUES (2)');
    await server.restart({ crash: true });
    expect(await waitFor(count, { message: 'rows after crash restart' })).toBe(2);
  });

  it('pause stops the postmaster and every backend; queries time out; resume recovers', async () => {
    const p = pool(server.url, { query_timeout: 500, connectionTimeoutMillis: 500 });
    await p.query('SELECT 1');
    await server.pause();
    const members = serverTree(server.pid as number);
    expect(members.length).toBeGreaterThan(3); // postmaster, checkpointer, ..., our backend
    expect(members.every((m) => m.state === 'T')).toBe(true);
    await expect(p.query('SELECT 1')).rejects.toThrow(/timeout/i);
    await server.resume();
    const fresh = pool(server.url);
    expect(
      await waitFor(async () => (await fresh.query('SELECT 1 AS one')).rows[0].one, {
        message: 'query after resume',
      }),
    ).toBe(1);
  });

  it('dropConnections terminates open connections; a pool reconnects', async () => {
    const client = new pg.Client({ connectionString: server.url });
    const errors: Error[] = [];
    client.on('error', (e) => errors.push(e));
    await client.connect();
    const p = pool(server.url, { max: 1 });
    await p.query('SELECT 1');
    await server.dropConnections();
    await waitFor(() => errors.length > 0, { message: 'client saw its connection terminated' });
    expect(errors[0]?.message).toMatch(/terminat/i);
    await client.end().catch(() => {});
    // the pool's idle client was terminated too; the pool replaces it
    expect(
      await waitFor(async () => (await p.query('SELECT 2 AS two')).rows[0].two, {
        message: 'pool query after drop',
      }),
    ).toBe(2);
  });

  it('close kills every postgres process, removes the temp dir, and is idempotent', async () => {
    const own = await startPostgres({ strategy: 'managed' });
    const { pid, dir, port } = own;
    expect(pgrep(dir as string).length).toBeGreaterThan(0);
    const p = pool(own.url);
    await p.query('SELECT 1');
    await own.pause();
    const processes = serverTree(pid as number); // postmaster, auxiliaries, our backend
    expect(processes.length).toBeGreaterThan(3);
    await Promise.all([own.close(), own.close()]);
    await waitServerGone({ pgid: pid as number, pattern: dir as string, port });
    expect(processes.filter(stillRunning)).toEqual([]);
    expect(existsSync(dir as string)).toBe(false);
    await expect(own.start()).rejects.toMatchObject({ code: 'SERVER_CLOSED' });
  });
});
