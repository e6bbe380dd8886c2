import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type PgBouncerServer, startPgBouncer } from '../src/index.js';
import { existsSync, pgrep, portOpen } from './helpers.js';

describe('startPgBouncer (transaction pooling)', () => {
  let bouncer: PgBouncerServer;
  beforeAll(async () => {
    bouncer = await startPgBouncer({ upstreamUrl: inject('fleetcronPostgresUrl') });
  }, 60_000);
  afterAll(() => bouncer?.close());

  it('forwards to the upstream; one client runs on several server connections', async () => {
    expect(bouncer.url).toBe(`postgres://postgres@127.0.0.1:${bouncer.port}/postgres`);
    const client = new pg.Client({ connectionString: bouncer.url });
    client.on('error', () => {});
    const load = new pg.Pool({ connectionString: bouncer.url, max: 8 });
    load.on('error', () => {});
    await client.connect();
    try {
      const pids = new Set<number>();
      for (let round = 0; round < 20 && pids.size < 2; round++) {
        const busy = Array.from({ length: 8 }, () => load.query('SELECT pg_sleep(0.01)'));
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        pids.add(Number(rows[0]?.pid));
        await Promise.all(busy);
      }
      expect(pids.size).toBeGreaterThan(1);
    } finally {
      await Promise.all([client.end(), load.end()]);
    }
  }, 60_000);

  it('close leaves no process and no open port (idempotent)', async () => {
    const other = await startPgBouncer({ upstreamUrl: inject('fleetcronPostgresUrl') });
    expect(await portOpen(other.port)).toBe(true);
    await Promise.all([other.close(), other.close()]);
    expect(await portOpen(other.port)).toBe(false);
    expect(pgrep(other.dir)).toEqual([]);
    expect(existsSync(other.dir)).toBe(false);
  }, 60_000);
});
