import {
  type ClaimRequest,
  type ClaimResult,
  isFleetcronError,
  type Lease,
  type Lock,
} from '@fleetcron/core';
import { isolatedPostgres } from '@fleetcron/testkit';
import type pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { POSTGRES_MAX_BATCH, PostgresLock } from '../src/index.js';
import { lockFixtures, testPool } from './fixture.js';

// Batched claims, renewals and releases: renewals and releases answer as the single calls do on
// twin leases (claims: the conformance scenario claimManyMatchesSingleClaims, run in
// conformance.test.ts); overlapping batches never both win; a re-sent batch gets the same
// leases; an aborted batch is never sent; oversized batches are refused.

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

const SECOND = 1000;

/** A claim request; `key` gets the twin's prefix when it is sent. */
function request(
  key: string,
  fireAt: number,
  owner: string,
  more: Partial<ClaimRequest> = {},
): ClaimRequest {
  return { key, fireAt, owner, leaseMs: 30_000, exclusive: true, ...more };
}

const onTwin = (twin: string, r: ClaimRequest): ClaimRequest => ({ ...r, key: `${twin}:${r.key}` });

/** Every won lease in `results` is the lease the lock holds (same token and expiry). */
async function expectHeldLeases(lock: Lock, results: ClaimResult[]): Promise<void> {
  for (const result of results) {
    if (result.status !== 'won') continue;
    const { leases } = await lock.inspect(result.lease.key);
    const live = leases.find((lease) => lease.token === result.lease.token);
    expect(live?.expiresAt, result.lease.key).toBe(result.lease.expiresAt);
  }
}

/** What the lock holds for a key, comparable across twins. */
async function held(lock: Lock, key: string): Promise<unknown> {
  const seen = await lock.inspect(key);
  return {
    fires: seen.fires,
    mark: seen.mark,
    leases: seen.leases.map(({ expiresAt: _, key: __, ...lease }) => lease),
  };
}

describe('PostgresLock.claimMany', () => {
  it('two clients sending overlapping batches in opposite orders never both win a fire', async () => {
    const fixture = await create();
    try {
      const [one, two] = [await fixture.newLock(), await fixture.newLock()];
      for (let round = 0; round < 8; round++) {
        const keys = Array.from({ length: 60 }, (_, i) => `race-${round}-${i}`);
        const fireAt = Date.now() - round - 100;
        const batchOf = (owner: string, order: string[]) =>
          order.map((key) => request(key, fireAt, owner, { exclusive: round % 2 === 0 }));
        const [a, b] = await Promise.all([
          one.claimMany?.(batchOf('one', keys)),
          two.claimMany?.(batchOf('two', [...keys].reverse())),
        ]);
        const byKey = new Map<string, string[]>();
        for (const result of [...(a ?? []), ...(b ?? [])]) {
          if (result.status !== 'won') continue;
          byKey.set(result.lease.key, [...(byKey.get(result.lease.key) ?? []), result.lease.owner]);
        }
        expect([...byKey.keys()].sort()).toEqual([...keys].sort());
        for (const [key, winners] of byKey) expect(winners, key).toHaveLength(1);
        const fires = await one.inspect(keys[round] ?? '');
        expect(fires.fires.filter((f) => f.fireAt === fireAt)).toHaveLength(1);
      }
    } finally {
      await fixture.close();
    }
  });

  it('a re-sent batch (its reply lost) returns the same leases and writes nothing new', async () => {
    const fixture = await create();
    try {
      const lock = await fixture.newLock();
      const fireAt = Date.now() - 500;
      const batch = Array.from({ length: 40 }, (_, i) =>
        request(`resend-${i % 20}`, fireAt - (i >= 20 ? SECOND : 0), 'me', {
          exclusive: i % 3 !== 0,
        }),
      );
      const first = (await lock.claimMany?.(batch)) ?? [];
      const again = (await lock.claimMany?.(batch)) ?? [];
      const strip = (results: ClaimResult[]) =>
        results.map(({ backendTime: _, ...result }) => result);
      expect(first.filter((r) => r.status === 'won').length).toBeGreaterThan(20);
      expect(strip(again)).toEqual(strip(first));
      await expectHeldLeases(lock, first);
      const tokens = await lock.inspect('resend-0');
      expect(tokens.fires).toHaveLength(2);
    } finally {
      await fixture.close();
    }
  });

  it('an aborted batch is never sent, also when aborted while waiting for a connection', async () => {
    const fixture = await create();
    try {
      const pool = testPool(await databaseUrl(), 1);
      pools.push(pool);
      const lock = new PostgresLock(pool, { schema: fixture.schema });
      const fireAt = Date.now() - 500;
      const batch = [request('abort-1', fireAt, 'me'), request('abort-2', fireAt, 'me')];
      const before = new AbortController();
      before.abort();
      const rejected = await lock.claimMany(batch, { signal: before.signal }).catch((e) => e);
      expect(isFleetcronError(rejected, 'BACKEND_UNAVAILABLE')).toBe(true);

      const busy = await pool.connect(); // the pool's only connection
      const queued = new AbortController();
      const waiting = lock.claimMany(batch, { signal: queued.signal }).catch((e) => e);
      queued.abort();
      expect(isFleetcronError(await waiting, 'BACKEND_UNAVAILABLE')).toBe(true);
      busy.release();
      // Anything the pool still had queued would run before this statement.
      await pool.query('SELECT 1');
      for (const key of ['abort-1', 'abort-2']) {
        expect((await lock.inspect(key)).fires, key).toEqual([]);
      }
      const sent = await lock.claimMany(batch, { signal: new AbortController().signal });
      expect(sent.map((r) => r.status)).toEqual(['won', 'won']);
    } finally {
      await fixture.close();
    }
  });

  it('refuses a batch larger than capabilities.maxBatch with InvalidOptionError, and takes a full one', async () => {
    const fixture = await create();
    try {
      const lock = await fixture.newLock();
      expect(lock.capabilities.maxBatch).toBe(POSTGRES_MAX_BATCH);
      const fireAt = Date.now() - 500;
      const full = Array.from({ length: POSTGRES_MAX_BATCH }, (_, i) =>
        request(`full-${i}`, fireAt, 'me'),
      );
      const tooMany = [...full, request('one-more', fireAt, 'me')];
      let error: unknown;
      try {
        await lock.claimMany?.(tooMany);
      } catch (e) {
        error = e;
      }
      expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
      expect((error as { field?: string }).field).toBe('requests');
      expect(await lock.claimMany?.([])).toEqual([]);
      const results = (await lock.claimMany?.(full)) ?? [];
      expect(results.map((r) => r.status)).toEqual(full.map(() => 'won'));
      expect(results.map((r) => (r.status === 'won' ? r.lease.key : null))).toEqual(
        full.map((r) => r.key),
      );
    } finally {
      await fixture.close();
    }
  });
});

describe('PostgresLock.extendMany and releaseMany', () => {
  /** Leases on twin keys A and B with the same history: live, released, stale-token, per-fire. */
  async function twinLeases(lock: Lock): Promise<Record<'A' | 'B', Lease[]>> {
    const fireAt = Date.now() - 500;
    const out: Record<'A' | 'B', Lease[]> = { A: [], B: [] };
    for (const twin of ['A', 'B'] as const) {
      const won = async (r: ClaimRequest) => {
        const result = await lock.claim(onTwin(twin, r));
        if (result.status !== 'won') throw new Error(`setup: ${JSON.stringify(result)}`);
        return result.lease;
      };
      const live = await won(request('live', fireAt, 'me'));
      const perFire = await won(request('per-fire', fireAt, 'me', { exclusive: false }));
      const released = await won(request('released', fireAt, 'me'));
      await lock.release(released);
      const releasedPerFire = await won(request('released-pf', fireAt, 'me', { exclusive: false }));
      await lock.release(releasedPerFire);
      const wrongToken = { ...(await won(request('wrong', fireAt, 'me'))) };
      wrongToken.token += 1;
      out[twin] = [live, perFire, released, releasedPerFire, wrongToken];
    }
    return out;
  }

  const relative = (lease: Lease | null) =>
    lease && {
      ...lease,
      key: lease.key.replace(/^[AB]:/, ''),
      expiresAt: lease.expiresAt - (lease.backendTime ?? Number.NaN),
      backendTime: 0,
    };

  it('extendMany answers what extend answers on twin leases', async () => {
    const fixture = await create();
    try {
      const lock = await fixture.newLock();
      const { A, B } = await twinLeases(lock);
      const ms = A.map((_, i) => 40_000 + i);
      const batched = (await lock.extendMany?.(A, ms)) ?? [];
      const singles: (Lease | null)[] = [];
      for (const [i, lease] of B.entries()) singles.push(await lock.extend(lease, ms[i] ?? 0));
      expect(batched.map(relative)).toEqual(singles.map(relative));
      expect(singles.filter((l) => l !== null)).toHaveLength(2);
      // One lease twice: both renewed, as two extends would.
      const twice = (await lock.extendMany?.([A[0]!, A[0]!], [50_000, 51_000])) ?? [];
      expect(twice.map((l) => l && l.expiresAt - (l.backendTime ?? 0))).toEqual([50_000, 51_000]);
      expect(await held(lock, 'A:live')).toEqual(await held(lock, 'B:live'));
      expect(await held(lock, 'A:per-fire')).toEqual(await held(lock, 'B:per-fire'));
    } finally {
      await fixture.close();
    }
  });

  it('releaseMany answers what release answers on twin leases, a repeated lease once', async () => {
    const fixture = await create();
    try {
      const lock = await fixture.newLock();
      const { A, B } = await twinLeases(lock);
      const batched = (await lock.releaseMany?.([...A, A[0]!])) ?? [];
      const singles: boolean[] = [];
      for (const lease of [...B, B[0]!]) singles.push(await lock.release(lease));
      expect(batched).toEqual(singles);
      expect(singles).toEqual([true, true, false, false, false, false]);
      for (const key of ['live', 'per-fire', 'released', 'wrong']) {
        expect(await held(lock, `A:${key}`), key).toEqual(await held(lock, `B:${key}`));
      }
      expect((await lock.inspect('A:live')).leases).toEqual([]);
    } finally {
      await fixture.close();
    }
  });
});
