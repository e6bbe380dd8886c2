import {
  BackendUnavailableError,
  type ClaimRequest,
  InvalidOptionError,
  isFleetcronError,
  LeaseTooShortError,
  offsetClock,
  realClock,
} from '@fleetcron/core';
import { startEtcd, waitFor } from '@fleetcron/testkit';
import type { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { EtcdLock, encodeFireAt } from '../src/index.js';
import { clientOf, etcdFixture, lazy } from './fixture.js';

const server = lazy(() => startEtcd());
afterAll(async () => {
  await (await server()).close();
});

const second = (offsetMs = 0) => Math.floor((Date.now() + offsetMs) / 1000) * 1000;
const req = (key: string, fireAt: number, owner: string, leaseMs = 2000, exclusive = true) =>
  ({ key, fireAt, owner, leaseMs, exclusive }) satisfies ClaimRequest;

/** Runs `body` on a fresh fixture (unique prefix) and closes it. */
async function withFixture<T>(
  body: (fixture: Awaited<ReturnType<typeof etcdFixture>>) => Promise<T>,
): Promise<T> {
  const fixture = await etcdFixture(await server());
  try {
    return await body(fixture);
  } finally {
    await fixture.close();
  }
}

/** Number of etcd leases on the server (every lease this file's clients granted). */
async function leaseCount(client: Etcd3): Promise<number> {
  return (await client.leaseClient.leaseLeases()).leases.length;
}

describe('EtcdLock options', () => {
  it('rejects bad options at construction, naming the field', async () => {
    const client = clientOf(await server());
    try {
      const cases: [Record<string, unknown>, string][] = [
        [{ windowMs: 0 }, 'windowMs'],
        [{ prefix: '' }, 'prefix'],
        [{ requestTimeoutMs: -1 }, 'requestTimeoutMs'],
        [{ skewToleranceMs: Number.NaN }, 'skewToleranceMs'],
        [{ spareLeases: 1.5 }, 'spareLeases'],
        [{ etcdClock: true }, 'etcdClock'],
        [{ etcdClock: { url: 'localhost:2379' } }, 'etcdClock.url'],
        [{ etcdClock: { remeasureMs: 0 } }, 'etcdClock.remeasureMs'],
        [{ etcdClock: { maxErrorMs: -5 } }, 'etcdClock.maxErrorMs'],
        [{ maxTxnOps: 8 }, 'maxTxnOps'],
      ];
      for (const [options, field] of cases) {
        let caught: unknown;
        try {
          new EtcdLock(client, options);
        } catch (error) {
          caught = error;
        }
        expect(caught, field).toBeInstanceOf(InvalidOptionError);
        expect((caught as InvalidOptionError).field).toBe(field);
      }
      const lock = new EtcdLock(client);
      expect(lock.prefix).toBe('fleetcron/');
      expect(lock.capabilities).toEqual({
        minLeaseMs: 2000,
        leaseGranularityMs: 1000,
        durable: true,
        clock: 'client',
        earlyToleranceMs: 250,
        backendTimeBoundMs: 100,
        durableMark: true,
        maxBatch: 1000,
      });
      await lock.close();
    } finally {
      client.close();
    }
  });

  it('rejects a lease shorter than 2 s in claim and extend with LeaseTooShortError', async () => {
    await withFixture(async (fixture) => {
      const lock = await fixture.newLock();
      await expect(lock.claim(req('short', second(), 'a', 1999))).rejects.toBeInstanceOf(
        LeaseTooShortError,
      );
      const won = await lock.claim(req('short', second(), 'a', 2000));
      expect(won.status).toBe('won');
      if (won.status !== 'won') return;
      await expect(lock.extend(won.lease, 1000)).rejects.toMatchObject({ code: 'LEASE_TOO_SHORT' });
      expect(await lock.release(won.lease)).toBe(true);
      expect(await fixture.probe?.claimRecordCount()).toBe(1);
    });
  });
});

describe('EtcdLock key layout and tokens', () => {
  it('writes the documented keys; the token is the revision of the claim transaction', async () => {
    await withFixture(async (fixture) => {
      const lock = await fixture.newLock();
      const key = 'billing/daily 🚀';
      const fireAt = second();
      const won = await lock.claim(req(key, fireAt, 'a', 5000));
      if (won.status !== 'won') throw new Error(`expected won, got ${won.status}`);
      const enc = encodeURIComponent(key);
      const record = (
        await fixture.admin.kv.range({
          key: Buffer.from(`${fixture.prefix}c/${enc}/${encodeFireAt(fireAt)}`),
        })
      ).kvs[0];
      const slot = (await fixture.admin.kv.range({ key: Buffer.from(`${fixture.prefix}x/${enc}`) }))
        .kvs[0];
      expect(record && JSON.parse(record.value.toString())).toEqual({ owner: 'a', outcome: 'won' });
      expect(Number(record?.create_revision)).toBe(won.lease.token);
      expect(Number(slot?.create_revision)).toBe(won.lease.token);
      expect(JSON.parse(slot?.value.toString() ?? '{}')).toMatchObject({ owner: 'a', fireAt });
      // Both keys are attached to etcd leases: the lease key to one of about leaseMs (+1 s margin).
      expect(record?.lease).not.toBe('0');
      const ttl = await fixture.admin.leaseClient.leaseTimeToLive({ ID: slot?.lease });
      expect(Number(ttl.grantedTTL)).toBe(6);
      // A later claim on another key still gets a higher token (revisions are cluster-wide).
      const other = await lock.claim(req('other', fireAt, 'a', 5000, false));
      expect(other.status === 'won' && other.lease.token).toBeGreaterThan(won.lease.token);
    });
  });

  it('gives strictly increasing tokens to one key across 16 clients and 30 fires', async () => {
    await withFixture(async (fixture) => {
      const locks = await Promise.all(Array.from({ length: 16 }, () => fixture.newLock()));
      const base = second(-120_000);
      let last = 0;
      for (let i = 0; i < 30; i++) {
        const results = await Promise.all(
          locks.map((lock, c) => lock.claim(req('tokens', base + i * 1000, `c${c}`))),
        );
        const winners = results.filter((r) => r.status === 'won');
        expect(winners).toHaveLength(1);
        expect(results.filter((r) => r.status === 'lost')).toHaveLength(15);
        const winner = winners[0];
        if (winner?.status !== 'won') throw new Error('unreachable');
        expect(winner.lease.token).toBeGreaterThan(last);
        last = winner.lease.token;
        const c = results.indexOf(winner);
        expect(await locks[c]?.release(winner.lease)).toBe(true);
      }
    });
  });
});

describe('EtcdLock leases', () => {
  it('a holder that stops extending loses its key when the server-side TTL runs out', async () => {
    await withFixture(async (fixture) => {
      const [holder, other] = [await fixture.newLock(), await fixture.newLock()];
      const t = second(-3000); // every fire claimed here is due (none is early)
      const started = Date.now();
      const won = await holder.claim(req('paused-holder', t, 'holder', 2000));
      if (won.status !== 'won') throw new Error(`expected won, got ${won.status}`);
      expect((await other.claim(req('paused-holder', t + 1000, 'other', 2000))).status).toBe(
        'busy',
      );
      // No extend (a paused or partitioned holder): etcd drops the key by itself.
      await waitFor(async () => (await other.inspect('paused-holder')).leases.length === 0, {
        timeoutMs: 15_000,
        message: 'the lease key to expire on the server',
      });
      const elapsed = Date.now() - started;
      // leaseMs 2000 + 1 s spare margin + etcd's expiry loop; never before leaseMs.
      expect(elapsed).toBeGreaterThanOrEqual(2000);
      expect(await holder.extend(won.lease, 2000)).toBeNull();
      const next = await other.claim(req('paused-holder', t + 2000, 'other', 2000));
      expect(next.status === 'won' && next.lease.token).toBeGreaterThan(won.lease.token);
    });
  });

  it('extend keeps a lease alive past its TTL', async () => {
    await withFixture(async (fixture) => {
      const [holder, other] = [await fixture.newLock(), await fixture.newLock()];
      const t = second();
      const won = await holder.claim(req('kept', t, 'holder', 2000));
      if (won.status !== 'won') throw new Error(`expected won, got ${won.status}`);
      const until = Date.now() + 5000;
      let lease = won.lease;
      while (Date.now() < until) {
        const next = await holder.extend(lease, 2000);
        expect(next, 'extend of a live lease').not.toBeNull();
        lease = next ?? lease;
        await new Promise((resolve) => setTimeout(resolve, 500)); // pacing the renewals
      }
      expect((await other.claim(req('kept', t + 1000, 'other', 2000))).status).toBe('busy');
      expect(await holder.release(lease)).toBe(true);
    });
  });

  it('after warm-up a claim grants no lease: spare leases are reused (one transaction)', async () => {
    await withFixture(async (fixture) => {
      const lock = await fixture.newLock();
      const base = second(-30_000);
      const cycle = async (i: number) => {
        const won = await lock.claim(req('reuse', base + i, 'a', 3000));
        if (won.status !== 'won') throw new Error(`expected won, got ${won.status}`);
        expect(await lock.release(won.lease)).toBe(true);
      };
      for (let i = 0; i < 5; i++) await cycle(i);
      const before = await leaseCount(fixture.admin);
      for (let i = 5; i < 105; i++) await cycle(i);
      const after = await leaseCount(fixture.admin);
      // 100 claims; at most a record-lease bucket or two and a spare more.
      expect(after - before).toBeLessThanOrEqual(3);
    });
  });

  it('spareLeases: 0 grants one lease per claim and revokes it on release', async () => {
    const fixture = await etcdFixture(await server(), { spareLeases: 0 });
    try {
      const lock = await fixture.newLock();
      const t = second();
      const won = await lock.claim(req('no-pool', t, 'a', 2000));
      if (won.status !== 'won') throw new Error(`expected won, got ${won.status}`);
      const slot = (
        await fixture.admin.kv.range({ key: Buffer.from(`${fixture.prefix}x/no-pool`) })
      ).kvs[0];
      const ttl = await fixture.admin.leaseClient.leaseTimeToLive({ ID: slot?.lease });
      expect(Number(ttl.grantedTTL), 'exact TTL without the spare margin').toBe(2);
      expect(await lock.extend(won.lease, 2000)).not.toBeNull();
      expect(await lock.release(won.lease)).toBe(true);
      await waitFor(
        async () =>
          Number((await fixture.admin.leaseClient.leaseTimeToLive({ ID: slot?.lease })).TTL) < 0,
        { timeoutMs: 10_000, message: 'the per-claim lease to be revoked' },
      );
    } finally {
      await fixture.close();
    }
  });

  it('close() ends held leases, keeps claim records and leaves the client open', async () => {
    await withFixture(async (fixture) => {
      const client = clientOf(await server());
      try {
        const lock = new EtcdLock(client, { prefix: fixture.prefix });
        const observer = await fixture.newLock();
        const t = second();
        expect((await lock.claim(req('closing', t, 'a', 20_000))).status).toBe('won');
        await lock.close();
        await lock.close(); // idempotent
        const seen = await observer.inspect('closing');
        expect(seen.leases, 'the held lease was revoked').toEqual([]);
        expect(
          seen.fires.map((f) => f.owner),
          'the claim record stays',
        ).toEqual(['a']);
        expect(await observer.claim(req('closing', t, 'b', 2000))).toMatchObject({
          status: 'lost',
          reason: 'claimed',
        });
        await expect(lock.claim(req('closing', t + 1000, 'a'))).rejects.toBeInstanceOf(
          BackendUnavailableError,
        );
        await expect(lock.claim(req('closing', t + 1000, 'a'))).rejects.toThrow(
          'etcd backend unavailable during claim: this EtcdLock is closed; create a new one',
        );
        // The user's client still works.
        expect(await client.get(`${fixture.prefix}nothing`).string()).toBeNull();
      } finally {
        client.close();
      }
    });
  });
});

describe('EtcdLock clock bound', () => {
  it('keeps records for windowMs + skewToleranceMs, so a client behind by less still loses', async () => {
    await withFixture(async (fixture) => {
      const claimer = await fixture.newLock({ windowMs: 2000 });
      const behind = new EtcdLock(clientOf(await server()), {
        prefix: fixture.prefix,
        windowMs: 2000,
        clock: offsetClock(realClock, -1500),
        // the bound of the fallback: staleness judged by the client's own clock (with the etcd
        // host's clock measured, the fire is simply stale to this client too)
        etcdClock: false,
      });
      try {
        const fireAt = Date.now() - 500;
        expect((await claimer.claim(req('skew-bound', fireAt, 'a', 2000, false))).status).toBe(
          'won',
        );
        // Past the window by the claimer's clock; 1.5 s behind, the other client still claims.
        await waitFor(() => Date.now() > fireAt + 2000 + 300, {
          timeoutMs: 10_000,
          message: 'the window to pass',
        });
        expect((await claimer.inspect('skew-bound')).fires, 'collected by the window').toEqual([]);
        expect(await behind.claim(req('skew-bound', fireAt, 'b', 2000, false))).toMatchObject({
          status: 'lost',
          reason: 'claimed',
        });
      } finally {
        await behind.close();
      }
    });
  });
});

describe('EtcdLock faults', () => {
  const dedicated = lazy(() => startEtcd({ strategy: 'managed' }));
  afterAll(async () => {
    await (await dedicated()).close();
  });

  it('a paused server makes claims fail fast with BackendUnavailableError; they resume after', async () => {
    const etcd = await dedicated();
    const caught: unknown[] = [];
    const onRejection = (reason: unknown) => caught.push(reason);
    process.on('unhandledRejection', onRejection);
    const fixture = await etcdFixture(etcd, { requestTimeoutMs: 1000 });
    try {
      const lock = await fixture.newLock();
      const t = second(-30_000);
      expect((await lock.claim(req('pause', t, 'a', 2000, false))).status).toBe('won');
      await etcd.pause();
      try {
        const started = Date.now();
        const error = await lock.claim(req('pause', t + 1, 'a', 2000, false)).catch((e) => e);
        expect(isFleetcronError(error, 'BACKEND_UNAVAILABLE'), String(error)).toBe(true);
        expect(Date.now() - started, 'bounded by requestTimeoutMs').toBeLessThan(5000);
      } finally {
        await etcd.resume();
      }
      let fireAt = t + 2;
      const untyped: unknown[] = [];
      const answer = await waitFor(
        async () => {
          try {
            return await lock.claim(req('pause', fireAt++, 'a', 2000, false));
          } catch (error) {
            if (!isFleetcronError(error, 'BACKEND_UNAVAILABLE')) untyped.push(error);
            return undefined;
          }
        },
        { timeoutMs: 30_000, message: 'claims to be answered after resume' },
      );
      expect(answer.status).toBe('won');
      expect(untyped, 'every failure while recovering is typed').toEqual([]);
    } finally {
      await fixture.close();
      process.off('unhandledRejection', onRejection);
    }
    expect(caught).toEqual([]);
  });
});
