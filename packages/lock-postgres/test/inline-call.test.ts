import { isolatedPostgres } from '@fleetcron/testkit';
import type pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PostgresLock } from '../src/index.js';
import { sqlLiteral } from '../src/inline-call.js';
import { lockFixtures, testPool } from './fixture.js';

// Unprepared claims, renewals and releases send their arguments inline (simple protocol): any
// key or owner must arrive as itself, on a server with either string syntax.

let database: ReturnType<typeof isolatedPostgres> | undefined;
const databaseUrl = async () => {
  database ??= isolatedPostgres(inject('fleetcronPostgresUrl'));
  return (await database).url;
};
const pools: pg.Pool[] = [];
afterAll(async () => {
  for (const pool of pools.splice(0)) await pool.end();
  if (database) await (await database).drop();
});
const create = lockFixtures(databaseUrl);

const awkward = [
  "it's",
  "'); DROP TABLE fleetcron_claims; --",
  'back\\slash',
  "\\'; SELECT 1; --",
  '$$dollar$$',
  'ünïcødé ☃ 𝄞',
  '',
];

describe('inline arguments', () => {
  it('writes quotes doubled, and backslashes in an E literal', () => {
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral('a\\b')).toBe(" E'a\\\\b'");
    expect(sqlLiteral('plain')).toBe("'plain'");
  });

  it.each(['on', 'off'])(
    'keys and owners arrive as themselves (standard_conforming_strings %s)',
    async (setting) => {
      const fixture = await create();
      try {
        const url = new URL(await databaseUrl());
        url.searchParams.set('options', `-c standard_conforming_strings=${setting}`);
        const pool = testPool(url.toString(), 2);
        pools.push(pool);
        const { rows } = await pool.query<{ standard_conforming_strings: string }>(
          'SHOW standard_conforming_strings',
        );
        expect(rows[0]?.standard_conforming_strings).toBe(setting);
        const lock = new PostgresLock(pool, { schema: fixture.schema });
        const fireAt = Date.now() - 500;
        for (const [i, key] of awkward.entries()) {
          const owner = awkward[(i + 1) % awkward.length] ?? '';
          const result = await lock.claim({
            key,
            fireAt,
            owner,
            leaseMs: 20_000,
            exclusive: i % 2 === 0,
          });
          expect(result.status, key).toBe('won');
          if (result.status !== 'won') continue;
          expect(result.lease).toMatchObject({ key, owner });
          const renewed = await lock.extend(result.lease, 30_000);
          expect(renewed?.owner, key).toBe(owner);
          const seen = await lock.inspect(key);
          expect(seen.fires, key).toEqual([{ fireAt, owner, outcome: 'won', token: 1 }]);
          expect(await lock.release(result.lease), key).toBe(true);
          expect((await lock.inspect(key)).leases, key).toEqual([]);
        }
        expect(await fixture.probe.claimRecordCount()).toBe(awkward.length);
      } finally {
        await fixture.close();
      }
    },
  );
});
