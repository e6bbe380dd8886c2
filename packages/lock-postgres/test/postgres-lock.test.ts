import { isFleetcronError, type Lock } from '@fleetcron/core';
import { postgresDatabase } from '@fleetcron/testkit/vitest';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresLock, postgresLockSchema } from '../src/index.js';
import { lockFixtures } from './fixture.js';

// What the conformance suite does not cover: options, the schema, NUL in keys, and different
// fires of one key racing for the exclusive slot.

const databaseUrl = postgresDatabase();
const create = lockFixtures(databaseUrl);

const bare = () => new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none', max: 1 });

describe('PostgresLock options', () => {
  it.each([
    ['schema', { schema: 'bad-name' }],
    ['schema', { schema: '1abc' }],
    ['table', { table: 'x"; DROP TABLE y; --' }],
    ['table', { table: 'a'.repeat(57) }],
    ['windowMs', { windowMs: 0 }],
    ['windowMs', { windowMs: 1.5 }],
    ['statementTimeoutMs', { statementTimeoutMs: -1 }],
  ])('rejects a bad %s at construction with a typed error naming it', (field, options) => {
    const pool = bare();
    let error: unknown;
    try {
      new PostgresLock(pool, options);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field?: string }).field).toBe(field);
  });

  it('rejects something that is not a pool', () => {
    expect(() => new PostgresLock({} as pg.Pool)).toThrow(/pool/);
  });

  it('attaches an error listener to a pool that has none, and only then', () => {
    const pool = bare();
    new PostgresLock(pool);
    new PostgresLock(pool);
    expect(pool.listenerCount('error')).toBe(1);
    // An idle-client error on the pool is handled, not thrown.
    expect(() => pool.emit('error', new Error('idle client died'))).not.toThrow();
    const own = bare();
    const mine = () => {};
    own.on('error', mine);
    new PostgresLock(own);
    expect(own.listeners('error')).toEqual([mine]);
  });

  it('declares backend capabilities: 1 ms leases, durable, backend clock, 250 ms early tolerance', () => {
    expect(new PostgresLock(bare()).capabilities).toEqual({
      minLeaseMs: 1,
      leaseGranularityMs: 1,
      durable: true,
      clock: 'backend',
      earlyToleranceMs: 250,
      durableMark: true,
      maxBatch: 1000,
    });
    expect(new PostgresLock(bare(), { earlyToleranceMs: 40 }).capabilities.earlyToleranceMs).toBe(
      40,
    );
    expect(() => new PostgresLock(bare(), { earlyToleranceMs: -1 })).toThrow(/earlyToleranceMs/);
  });

  it('exports the schema as idempotent SQL for a chosen schema and prefix', () => {
    const sql = postgresLockSchema({ schema: 'jobs', table: 'cron' });
    expect(sql).toContain('CREATE SCHEMA IF NOT EXISTS "jobs"');
    for (const table of ['cron_keys', 'cron_claims']) {
      expect(sql).toContain(`CREATE TABLE IF NOT EXISTS "jobs"."${table}"`);
    }
    expect(postgresLockSchema()).not.toContain('CREATE SCHEMA');
    expect(sql).toContain('CREATE OR REPLACE FUNCTION "jobs"."cron_claim"(');
    expect(sql).toContain('CREATE OR REPLACE FUNCTION "jobs"."cron_claim_many"(');
    expect(sql).not.toContain('claim_seq');
    expect(sql).toContain('pg_advisory_xact_lock');
  });
});

describe('PostgresLock on PostgreSQL', () => {
  it('migrate() is idempotent, also when instances run it at once', async () => {
    const fixture = await create();
    try {
      const url = await databaseUrl();
      const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url, max: 1 }));
      try {
        const schema = `${fixture.schema}_m`;
        await Promise.all(pools.map((pool) => new PostgresLock(pool, { schema }).migrate()));
        await new PostgresLock(pools[0]!, { schema }).migrate();
        const lock = new PostgresLock(pools[0]!, { schema });
        const won = await lock.claim({
          key: 'm',
          fireAt: Date.now(),
          owner: 'a',
          leaseMs: 1000,
          exclusive: true,
        });
        expect(won.status).toBe('won');
        await pools[0]!.query(`DROP SCHEMA "${schema}" CASCADE`);
      } finally {
        await Promise.all(pools.map((p) => p.end()));
      }
    } finally {
      await fixture.close();
    }
  });

  it('a claim that waited for the key lock answers from the winner committed meanwhile', async () => {
    const fixture = await create();
    const holder = await fixture.admin.connect();
    try {
      const lock = await fixture.newLock();
      const fireAt = Date.now();
      const fn = `"${fixture.schema}"."fleetcron_claim"`;
      // Claim through the function in an open transaction: it holds the key's row lock.
      await holder.query('BEGIN');
      const { rows } = await holder.query<{ a_status: string; a_token: string }>(
        `SELECT a_status, a_token FROM ${fn}($1, $2, $3, $4, $5, $6, $7, $8)`,
        ['w', fireAt, 'winner', 20_000, true, 300_000, 5_000, 250],
      );
      expect(rows[0]).toEqual({ a_status: 'won', a_token: '1' });
      const waiting = lock.claim({
        key: 'w',
        fireAt,
        owner: 'late',
        leaseMs: 20_000,
        exclusive: true,
      });
      // Commit only once the late claim is blocked on the row lock (poll, with a deadline).
      const deadline = Date.now() + 20_000;
      for (;;) {
        const blocked = await fixture.admin.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query LIKE '%fleetcron_claim%' AND pid <> $1`,
          [(holder as unknown as { processID: number }).processID],
        );
        if (blocked.rows[0]?.n === '1') break;
        if (Date.now() > deadline) throw new Error('the late claim never waited for the lock');
        await new Promise((resolve) => setImmediate(resolve));
      }
      await holder.query('COMMIT');
      expect(await waiting).toMatchObject({ status: 'lost', key: 'w', fireAt, reason: 'claimed' });
      const seen = await lock.inspect('w');
      expect(seen.fires).toEqual([{ fireAt, owner: 'winner', outcome: 'won', token: 1 }]);
      expect(seen.mark).toBe(fireAt);
    } finally {
      holder.release();
      await fixture.close();
    }
  });

  it('keys and owners holding U+0000, backslashes or the escape marker round-trip and stay distinct', async () => {
    const fixture = await create();
    try {
      const lock = await fixture.newLock();
      const fireAt = Date.now();
      const keys = ['a\0b', 'a\\0b', '\uFFFFa\\0b', 'a\\\\0b', '\0', ''];
      const owners = ['o\0', 'o\\0', '\uFFFF', 'plain', '\0\0', 'x'];
      for (const [i, key] of keys.entries()) {
        const result = await lock.claim({
          key,
          fireAt,
          owner: owners[i]!,
          leaseMs: 20_000,
          exclusive: true,
        });
        expect(result, JSON.stringify(key)).toMatchObject({
          status: 'won',
          lease: { key, owner: owners[i], token: 1 },
        });
      }
      for (const [i, key] of keys.entries()) {
        const seen = await lock.inspect(key);
        expect(seen.fires).toEqual([{ fireAt, owner: owners[i], outcome: 'won', token: 1 }]);
        expect(seen.leases.map((l) => [l.key, l.owner])).toEqual([[key, owners[i]]]);
        const replay = await lock.claim({
          key,
          fireAt,
          owner: owners[i]!,
          leaseMs: 20_000,
          exclusive: true,
        });
        expect(replay.status, `replay of ${JSON.stringify(key)}`).toBe('won');
      }
      expect(await fixture.probe.claimRecordCount()).toBe(keys.length);
    } finally {
      await fixture.close();
    }
  });

  it.each([
    ['unnamed statements', false],
    ['prepared statements', true],
  ])(
    'different fires of one key racing for the exclusive slot: one won, the rest busy, every round (%s)',
    async (_, preparedStatements) => {
      const fixture = await lockFixtures(databaseUrl, { preparedStatements })();
      try {
        const locks: Lock[] = [];
        for (let i = 0; i < 16; i++) locks.push(await fixture.newLock());
        const base = Math.floor(Date.now() / 1000) * 1000 - 100_000;
        let lastToken = 0;
        for (let round = 0; round < 25; round++) {
          // 16 claimers, each of its own fire, all at once, while no lease is live.
          const results = await Promise.all(
            locks.map((lock, c) =>
              lock.claim({
                key: 'slot',
                fireAt: base + round * 100 + c,
                owner: `c${c}`,
                leaseMs: 30_000,
                exclusive: true,
              }),
            ),
          );
          const won = results.filter((r) => r.status === 'won');
          const busy = results.filter((r) => r.status === 'busy');
          expect(won, `round ${round}: ${results.map((r) => r.status).join(',')}`).toHaveLength(1);
          expect(busy).toHaveLength(15);
          const lease = won[0]!.status === 'won' ? won[0]!.lease : undefined;
          expect(lease!.token).toBeGreaterThan(lastToken);
          lastToken = lease!.token;
          const seen = await locks[0]!.inspect('slot');
          expect(seen.leases.map((l) => l.token)).toEqual([lease!.token]);
          const fires = seen.fires.filter((f) => f.fireAt >= base + round * 100);
          expect(fires.map((f) => f.outcome).sort()).toEqual([...Array(15).fill('busy'), 'won']);
          expect(await locks[0]!.release(lease!)).toBe(true);
        }
      } finally {
        await fixture.close();
      }
    },
    60_000,
  );

  it('prepared statements of two schemas share one pool', async () => {
    const [one, two] = [await create(), await create()];
    const pool = new pg.Pool({ connectionString: await databaseUrl(), max: 1 });
    try {
      const fireAt = Date.now();
      for (const fixture of [one, two]) {
        const lock = new PostgresLock(pool, { schema: fixture.schema, preparedStatements: true });
        for (let i = 0; i < 3; i++) {
          const result = await lock.claim({
            key: 'p',
            fireAt: fireAt + i,
            owner: 'a',
            leaseMs: 1,
            exclusive: false,
          });
          expect(result).toMatchObject({ status: 'won', lease: { token: i + 1 } });
        }
        expect((await lock.inspect('p')).fires).toHaveLength(3);
      }
    } finally {
      await pool.end();
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('a fire answered lost (stale, early) or busy leaves no lease and no token', async () => {
    const fixture = await create();
    try {
      const lock = await fixture.newLock({ windowMs: 10_000 });
      const now = Date.now();
      const req = (fireAt: number, owner: string) =>
        ({ key: 'k', fireAt, owner, leaseMs: 20_000, exclusive: true }) as const;
      expect(await lock.claim(req(now - 60_000, 'a'))).toMatchObject({
        status: 'lost',
        reason: 'stale',
      });
      expect(await lock.claim(req(now + 60_000, 'a'))).toMatchObject({
        status: 'lost',
        reason: 'early',
      });
      const first = await lock.claim(req(now, 'a'));
      expect(first).toMatchObject({ status: 'won', lease: { token: 1 } });
      expect(await lock.claim(req(now + 1, 'b'))).toMatchObject({ status: 'busy' });
      expect(await lock.claim(req(now + 2, 'c'))).toMatchObject({ status: 'busy' });
      if (first.status === 'won') await lock.release(first.lease);
      // busy answers used no token: the next one is 2.
      expect(await lock.claim(req(now + 3, 'd'))).toMatchObject({
        status: 'won',
        lease: { token: 2 },
      });
    } finally {
      await fixture.close();
    }
  });
});
