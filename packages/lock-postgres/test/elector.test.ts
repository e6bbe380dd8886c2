import { isFleetcronError } from '@fleetcron/core';
import { isolatedPostgres } from '@fleetcron/testkit';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PostgresElector, postgresElectorSchema } from '../src/index.js';
import { testPool } from './fixture.js';

let database: ReturnType<typeof isolatedPostgres> | undefined;
const pools: ReturnType<typeof testPool>[] = [];
async function pool() {
  database ??= isolatedPostgres(inject('fleetcronPostgresUrl'));
  const p = testPool((await database).url, 4);
  pools.push(p);
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  if (database) await (await database).drop();
});

describe('PostgresElector', () => {
  it('bad options throw InvalidOptionError naming the field, at construction', async () => {
    const p = await pool();
    const bad: [unknown, Record<string, unknown>, string][] = [
      [{}, {}, 'pool'],
      [p, { schema: 'bad"name' }, 'schema'],
      [p, { table: '' }, 'table'],
      [p, { statementTimeoutMs: -1 }, 'statementTimeoutMs'],
    ];
    for (const [which, options, field] of bad) {
      let caught: unknown;
      try {
        new PostgresElector(which as never, options);
      } catch (error) {
        caught = error;
      }
      expect(isFleetcronError(caught, 'INVALID_OPTION'), String(caught)).toBe(true);
      expect((caught as { field?: string }).field).toBe(field);
    }
  });

  it('terms come from a durable per-election counter; a resigned row keeps it; U+0000 in names round-trips', async () => {
    const p = await pool();
    const elector = new PostgresElector(p, { schema: 'elector_unit' });
    await elector.migrate();
    await elector.migrate(); // idempotent
    const election = `e\u0000${Date.now()}`;
    const first = await elector.campaign({ election, id: 'a\u0000', ttlMs: 10_000 });
    if (first.status !== 'elected') throw new Error('not elected');
    expect(first.leader).toMatchObject({ election, id: 'a\u0000', term: 1 });
    expect(await elector.resign(first.leader)).toBe(true);
    const second = await elector.campaign({ election, id: 'b', ttlMs: 10_000 });
    expect(second).toMatchObject({ status: 'elected', leader: { term: 2 } });
    const { rows } = await p.query(
      `SELECT last_term FROM "elector_unit".fleetcron_elections WHERE leader = 'b'`,
    );
    expect(rows.map((r) => Number(r.last_term))).toContain(2);
    expect(postgresElectorSchema({ schema: 'x' })).toContain(
      'CREATE TABLE IF NOT EXISTS "x"."fleetcron_elections"',
    );
  });
});
